"""Parse a whole DAGs folder the way Airflow's DagBag does, each file isolated.

Files are found like Airflow finds them (``.py`` files, ``.airflowignore``,
the safe-mode heuristic), parsed in parallel in forked children, and then
checked against each other: a dag_id that two files define belongs to the file
that comes first in sorted relative-path order and is an import error on the
later one. Sorting makes that choice the same on every machine and every run.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from updraft.model.parse_results import ImportErrorRecord, ParsedFile, dag_id_of
from updraft.parsing.ignore import IGNORE_FILE, Rule, is_ignored, read_rules
from updraft.parsing.options import FileJob, ParseOptions


def might_contain_dag(path: str | Path) -> bool:
    """Airflow's safe-mode heuristic: the file mentions ``airflow`` and ``dag`` (or ``asset``).

    Cheap enough to run on every file, and it keeps helper modules in the
    DAGs folder from being executed as DAG files.
    """
    try:
        with open(path, "rb") as f:
            content = f.read().lower()
    except OSError:
        return False
    return b"airflow" in content and (b"dag" in content or b"asset" in content)


def _skip_name(name: str) -> bool:
    return name.startswith(".") or name == "__pycache__"


def find_python_files(folder: str | Path, *, ignore_syntax: str = "glob") -> list[Path]:
    """Every ``.py`` file under ``folder`` not excluded by ``.airflowignore``, sorted.

    Follows symlinks like Airflow and refuses a symlink loop instead of walking
    forever. Hidden entries and ``__pycache__`` are skipped.
    """
    base = Path(folder).absolute()
    if base.is_file():
        return [base] if base.suffix == ".py" else []
    if not base.is_dir():
        raise FileNotFoundError(f"DAGs folder {folder} does not exist")
    rules_by_dir: dict[Path, list[Rule]] = {}
    seen_dirs: set[Path] = {base.resolve()}
    found: list[Path] = []
    for root, dirs, files in os.walk(base, followlinks=True):
        root_path = Path(root)
        rules = list(rules_by_dir.get(root_path, []))
        if IGNORE_FILE in files:
            rules += read_rules(root_path / IGNORE_FILE, base, ignore_syntax)
        kept = []
        for d in sorted(dirs):
            if _skip_name(d) or is_ignored(root_path / d, rules, is_dir=True):
                continue
            real = (root_path / d).resolve()
            if real in seen_dirs:
                raise RuntimeError(
                    f"Detected recursive loop when walking DAG directory {base}: "
                    f"{real} has appeared more than once."
                )
            seen_dirs.add(real)
            rules_by_dir[root_path / d] = rules
            kept.append(d)
        dirs[:] = kept
        for name in files:
            if not name.endswith(".py") or _skip_name(name):
                continue
            path = root_path / name
            if not is_ignored(path, rules, is_dir=False):
                found.append(path)
    return sorted(found, key=lambda p: p.relative_to(base).as_posix())


def list_dag_files(
    folder: str | Path, *, safe_mode: bool = True, ignore_syntax: str = "glob"
) -> tuple[list[FileJob], list[str]]:
    """The files to parse as jobs, and the relative paths safe mode skipped."""
    base = Path(folder).absolute()
    root = base.parent if base.is_file() else base
    jobs: list[FileJob] = []
    skipped: list[str] = []
    for path in find_python_files(base, ignore_syntax=ignore_syntax):
        rel = path.relative_to(root).as_posix()
        if safe_mode and not might_contain_dag(path):
            skipped.append(rel)
            continue
        jobs.append(FileJob(path=str(path), relative_path=rel, dags_folder=str(root)))
    return jobs, skipped


def flag_duplicate_dag_ids(files: list[ParsedFile]) -> None:
    """Drop a dag_id's later definitions and record them as import errors, in place.

    ``files`` must be in sorted relative-path order: the first file to define
    a dag_id keeps it, as Airflow keeps the first DAG it bagged.
    """
    owner: dict[str, str] = {}
    for parsed in files:
        kept = []
        for dag in parsed.dags:
            dag_id = dag_id_of(dag)
            first = owner.get(dag_id)
            if first is None:
                owner[dag_id] = parsed.relative_path
                kept.append(dag)
                continue
            message = (
                f"AirflowDagDuplicatedIdException: Ignoring DAG {dag_id} from {parsed.relative_path} "
                f"- also found in {first}"
            )
            parsed.import_errors.append(
                ImportErrorRecord(
                    filename=parsed.relative_path,
                    lineno=None,
                    message=message,
                    stacktrace=message,
                    dag_id=dag_id,
                )
            )
        parsed.dags = kept


@dataclass
class FolderParseResult:
    """Everything a folder produced; ``files`` is in sorted relative-path order."""

    dags_folder: str
    files: list[ParsedFile]
    skipped: list[str] = field(default_factory=list)
    duration_s: float = 0.0

    @property
    def dags(self) -> list[dict]:
        """Serialized DAGs of the whole folder, sorted by dag_id (ids are unique here)."""
        all_dags = [d for f in self.files for d in f.dags]
        return sorted(all_dags, key=dag_id_of)

    @property
    def import_errors(self) -> list[ImportErrorRecord]:
        return [e for f in self.files for e in f.import_errors]

    def dag(self, dag_id: str) -> dict | None:
        for parsed in self.files:
            for d in parsed.dags:
                if dag_id_of(d) == dag_id:
                    return d
        return None

    def to_dict(self) -> dict:
        return {
            "dags_folder": self.dags_folder,
            "files": [f.to_dict() for f in self.files],
            "skipped": list(self.skipped),
            "duration_s": self.duration_s,
        }


def parse_dags_folder(
    folder: str | Path,
    options: ParseOptions | None = None,
    *,
    parser=None,
    ignore_syntax: str = "glob",
) -> FolderParseResult:
    """Find, parse (isolated, in parallel) and cross-check every DAG file of ``folder``.

    Without ``parser`` the process-wide warm parser for ``options`` is used.
    """
    # lazy: cold start (the parser Lambda imports this module for its file filters only)
    from updraft.parsing.isolation import shared_parser

    started = time.perf_counter()
    options = options or (parser.options if parser is not None else ParseOptions())
    # Started before listing so the fork server warms up while files are read.
    parser = parser or shared_parser(options)
    jobs, skipped = list_dag_files(folder, safe_mode=options.safe_mode, ignore_syntax=ignore_syntax)
    files = parser.parse(jobs)
    flag_duplicate_dag_ids(files)
    base = Path(folder).absolute()
    return FolderParseResult(
        dags_folder=str(base.parent if base.is_file() else base),
        files=files,
        skipped=skipped,
        duration_s=time.perf_counter() - started,
    )


def is_excluded(folder: str | Path, path: str | Path, *, ignore_syntax: str = "glob") -> bool:
    """Whether a folder walk would skip ``path``: hidden, ``__pycache__`` or ``.airflowignore``d.

    Used when one file is parsed on its own (an S3 event names one key), so
    that it is skipped exactly when a whole-folder parse would skip it.
    """
    base = Path(folder).absolute()
    target = Path(path).absolute()
    parts = target.relative_to(base).parts
    rules: list[Rule] = []
    current = base
    for i, part in enumerate(parts):
        if (current / IGNORE_FILE).is_file():
            rules = rules + read_rules(current / IGNORE_FILE, base, ignore_syntax)
        current = current / part
        is_dir = i < len(parts) - 1
        if _skip_name(part) or is_ignored(current, rules, is_dir=is_dir):
            return True
    return False
