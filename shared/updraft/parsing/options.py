"""The knobs of a parse and the description of one file to parse.

Both are small frozen values so that they can cross the fork into the child
unchanged and so that the CLI, the Lambda handler and the benchmark all build
the same thing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MEMORY_LIMIT_MB = 1024
# A DAG file that prints in a loop must not fill the machine's memory with its
# captured output (the capture is an in-memory file); past this it is killed.
DEFAULT_MAX_OUTPUT_MB = 64
# What is kept of the captured output in the result: enough to debug, small
# enough to store next to the serialized DAGs.
DEFAULT_MAX_LOG_BYTES = 64 * 1024
# Processes a DAG file may start while it is parsed (RLIMIT_NPROC on top of the user's current count): enough for
# a helper command, too few for a fork bomb. Whatever they are, they are killed when the parse ends.
DEFAULT_MAX_PROCESSES = 32


def default_parallelism() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ParseOptions:
    """Limits for running DAG files.

    ``timeout_s`` matches Airflow's ``dagbag_import_timeout`` (30 s);
    ``memory_limit_mb`` caps what each child may map beyond the parser's own address space (RLIMIT_AS), ``None``
    or 0 for no cap; ``parallelism`` is how many children run at once
    (default: the CPUs this process may use); ``safe_mode`` is Airflow's
    ``dag_discovery_safe_mode`` heuristic. ``plugins_folder`` is Airflow's
    plugins folder: importable from DAG files, and its plugins are registered
    in the child before the DAG file runs (as Airflow's processor loads
    plugins first), so a custom timetable a plugin registers can serialize.
    ``max_processes`` caps the processes a file may start (RLIMIT_NPROC), ``None`` or 0 for no cap.
    """

    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB
    parallelism: int | None = None
    safe_mode: bool = True
    max_output_mb: int = DEFAULT_MAX_OUTPUT_MB
    max_log_bytes: int = DEFAULT_MAX_LOG_BYTES
    plugins_folder: str | None = None
    max_processes: int | None = DEFAULT_MAX_PROCESSES
    # What custom timetables are evaluated from for every file (``dags test``'s logical date), as JSON; a job's
    # own ``timetable_context`` takes precedence.
    timetable_context: str = ""

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise ValueError(f"parse timeout must be positive, got {self.timeout_s}")
        if self.memory_limit_mb is not None and self.memory_limit_mb < 0:
            raise ValueError(f"memory limit must be positive, got {self.memory_limit_mb}")
        if self.parallelism is not None and self.parallelism < 1:
            raise ValueError(f"parallelism must be at least 1, got {self.parallelism}")

    @property
    def workers(self) -> int:
        return self.parallelism or default_parallelism()


@dataclass(frozen=True)
class FileJob:
    """One DAG file to run.

    ``path`` is absolute; ``relative_path`` (to ``dags_folder``) is the file's
    identity everywhere else (import errors, serialized ``relative_fileloc``),
    so the same folder synced to another place parses to the same bytes.
    """

    path: str
    relative_path: str
    dags_folder: str
    file_version: str | None = None
    # The DAG-code role's credentials, set in the child's environment (``scrub.dag_code_environment``).
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)
    # What custom timetables are evaluated from (``parsing.timetable_horizons.TimetableContext`` as JSON; "": none).
    timetable_context: str = ""
