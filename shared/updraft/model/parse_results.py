"""What parsing one DAG file produces, as plain JSON-able records.

The child process that ran a DAG file and the parent that collects results
talk only through these records (sent as JSON over a pipe), and the same
records go to the CLI, the Lambda handler and, later, the store. Keeping them
JSON-only guarantees that nothing downstream ever needs to import user code
or unpickle objects created by it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HORIZON_KEY = "timetable_horizon"
"""Where a parsed DAG document carries its custom timetable's evaluated horizon (``updraft.timetables.evaluated``),
beside the versioned ``dag`` body: registration moves it onto the DAG's row."""


@dataclass
class ImportErrorRecord:
    """One reason a DAG file (or one DAG in it) could not be loaded.

    ``filename`` is the path relative to the DAGs folder, as Airflow stores it
    for ``airflow dags list-import-errors``; ``dag_id`` is set when only one
    DAG of the file failed (validation, duplicate id) and the others were kept.
    """

    filename: str
    lineno: int | None
    message: str
    stacktrace: str
    dag_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "filename": self.filename,
            "lineno": self.lineno,
            "message": self.message,
            "stacktrace": self.stacktrace,
            "dag_id": self.dag_id,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImportErrorRecord:
        return cls(
            filename=data["filename"],
            lineno=data.get("lineno"),
            message=data["message"],
            stacktrace=data.get("stacktrace", ""),
            dag_id=data.get("dag_id"),
        )


@dataclass
class PluginsReport:
    """The plugins folder as the child that ran a DAG file loaded it: each plugin's info (Airflow's
    ``get_plugin_info`` shape: ``updraft.parsing.plugin_info``) and each plugin file that failed to import (its
    path -> the error). Empty when the environment has no plugins folder. The parser keeps the latest for
    ``GET /plugins`` (the API never imports plugin code)."""

    plugins: list[dict[str, Any]] = field(default_factory=list)
    import_errors: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"plugins": self.plugins, "import_errors": self.import_errors}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PluginsReport:
        return cls(plugins=list(data.get("plugins", [])), import_errors=dict(data.get("import_errors", {})))


@dataclass
class ParsedFile:
    """The outcome of running one DAG file in isolation.

    ``dags`` holds serialized DAGs (``updraft.serialization.serialize_dag``),
    sorted by dag_id so the same file always yields the same list.
    ``logs`` is what the file printed on stdout/stderr while it ran: it is kept
    for the user but never mixed into the CLI's own output.
    ``file_version`` is where the file came from when that is more than its
    content (the S3 VersionId or ETag); ``peak_rss_kb`` is the child's peak
    resident memory, for benchmarks and for spotting heavy files. ``plugins``
    is the plugins folder as the child loaded it (None when no child ran the
    file to the end: a crash, a timeout, a file that could not be read).
    """

    relative_path: str
    file_hash: str
    dags: list[dict[str, Any]] = field(default_factory=list)
    import_errors: list[ImportErrorRecord] = field(default_factory=list)
    duration_s: float = 0.0
    logs: str = ""
    file_version: str | None = None
    peak_rss_kb: int | None = None
    plugins: PluginsReport | None = None

    @property
    def dag_ids(self) -> list[str]:
        return [dag_id_of(d) for d in self.dags]

    def to_dict(self) -> dict[str, Any]:
        # Built by hand: dataclasses.asdict deep-copies the serialized DAGs,
        # which in a forked child costs more than parsing the file did.
        return {
            "relative_path": self.relative_path,
            "file_hash": self.file_hash,
            "dags": self.dags,
            "import_errors": [e.to_dict() for e in self.import_errors],
            "duration_s": self.duration_s,
            "logs": self.logs,
            "file_version": self.file_version,
            "peak_rss_kb": self.peak_rss_kb,
            "plugins": None if self.plugins is None else self.plugins.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ParsedFile:
        return cls(
            relative_path=data["relative_path"],
            file_hash=data.get("file_hash", ""),
            dags=list(data.get("dags", [])),
            import_errors=[ImportErrorRecord.from_dict(e) for e in data.get("import_errors", [])],
            duration_s=float(data.get("duration_s", 0.0)),
            logs=data.get("logs", ""),
            file_version=data.get("file_version"),
            peak_rss_kb=data.get("peak_rss_kb"),
            plugins=PluginsReport.from_dict(data["plugins"]) if data.get("plugins") is not None else None,
        )


def dag_id_of(serialized: dict[str, Any]) -> str:
    """Find the dag_id in a serialized DAG without depending on its exact layout.

    The serialization schema is versioned and owned elsewhere; the parser only
    needs the id (for duplicate detection and listing), so it looks in the
    places a versioned envelope may keep it.
    """
    if "dag_id" in serialized:
        return str(serialized["dag_id"])
    dag = serialized.get("dag")
    if isinstance(dag, dict) and "dag_id" in dag:
        return str(dag["dag_id"])
    raise KeyError("serialized DAG has no dag_id")
