"""The DAG file parser: Airflow's DAG processor, isolated per file and fast.

Public entry points:

- :func:`parse_dags_folder` - a whole folder (CLI, local runs, benchmark);
- :class:`IsolatedParser` / :func:`shared_parser` - a warm parser (and its
  fork server) to keep alive across calls;
- :func:`parse_s3_dag_file` - one S3 key, for the parser Lambda;
- :class:`ParsedFile` / :class:`ImportErrorRecord` - the JSON-able results.

Nothing here imports user code into the calling process: every DAG file runs
in a forked child.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from updraft.model.parse_results import ImportErrorRecord, ParsedFile, dag_id_of
from updraft.parsing.options import FileJob, ParseOptions

if TYPE_CHECKING:
    from updraft.parsing.folder import FolderParseResult, parse_dags_folder
    from updraft.parsing.isolation import IsolatedParser, shared_parser
    from updraft.parsing.s3 import parse_s3_dag_file

__all__ = [
    "FileJob",
    "FolderParseResult",
    "ImportErrorRecord",
    "IsolatedParser",
    "ParseOptions",
    "ParsedFile",
    "dag_id_of",
    "parse_dags_folder",
    "parse_s3_dag_file",
    "shared_parser",
]

_LAZY = {
    "FolderParseResult": "updraft.parsing.folder",
    "parse_dags_folder": "updraft.parsing.folder",
    "IsolatedParser": "updraft.parsing.isolation",
    "shared_parser": "updraft.parsing.isolation",
    "parse_s3_dag_file": "updraft.parsing.s3",
}


def __getattr__(name: str) -> Any:
    # Lazy so that `import updraft.parsing` stays cheap for the CLI's --help
    # and does not pull boto3 in for callers that never touch S3.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
