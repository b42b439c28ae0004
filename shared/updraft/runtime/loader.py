"""Load the live DAG a run needs: import its file (never in the scheduler, only in the worker) and find the task.

The file is imported the way the parser imports it (``updraft.parsing.loader``: unique module name, DAGs folder on
``sys.path``, DAGs from globals and from auto-registration), so a task sees the same module it was parsed from.
Modules are cached per (path, content hash): a warm Lambda runs many tries of the same file without re-importing
it, and a changed file is imported afresh.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from updraft.sdk.exceptions import DagNotFound, TaskNotFound

SYNC_REUSE_S = 10.0


class LocalDagLoader:
    """DAG files from a local folder (local mode, ``updraft dags test``, Fargate images with baked DAGs)."""

    def __init__(self, dags_folder: str | os.PathLike[str],
                 plugins_folder: str | os.PathLike[str] | None = None) -> None:
        self.dags_folder = str(dags_folder)
        self.plugins_folder = str(plugins_folder) if plugins_folder else None
        self._plugins_loaded = False
        self._cache: dict[tuple[str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def path_for(self, relative_fileloc: str) -> str:
        return os.path.join(self.dags_folder, relative_fileloc)

    def load_file(self, relative_fileloc: str) -> dict[str, Any]:
        """Every DAG the file defines, by dag_id (cached like ``load_dag``)."""
        path = self.path_for(relative_fileloc)
        try:
            source = Path(path).read_bytes()
        except OSError as exc:
            raise DagNotFound(f"DAG file {relative_fileloc!r} cannot be read: {exc}") from exc
        digest = hashlib.sha256(source).hexdigest()
        with self._lock:
            dags = self._cache.get((path, digest))
            if dags is None:
                dags = self._import(path, source)
                self._cache[(path, digest)] = dags
        return dags

    def prepare(self, relative_fileloc: str, file_hash: str | None = None) -> None:
        """Make the file current on disk without importing it (a try's child process imports it)."""

    def load_dag(self, dag_id: str, relative_fileloc: str, file_hash: str | None = None) -> Any:
        """The live DAG ``dag_id`` defined by the file (``file_hash`` is informative: the file on disk wins)."""
        dags = self.load_file(relative_fileloc)
        if dag_id not in dags:
            raise DagNotFound(f"DAG {dag_id!r} not found in {relative_fileloc!r} (found: {sorted(dags)})")
        return dags[dag_id]

    def _import(self, path: str, source: bytes) -> dict[str, Any]:
        # lazy: cold start (the parse loader and the SDK's registry only when a DAG file is imported)
        from updraft.parsing.loader import _exec_module, collect_dags, unique_module_name
        from updraft.sdk._internal import dag_registry
        from updraft.sdk._internal.bundle_root import use_dags_folder

        if self.dags_folder not in sys.path:
            sys.path.append(self.dags_folder)
        use_dags_folder(self.dags_folder)
        if self.plugins_folder and not self._plugins_loaded:
            # Plugins (timetables, macros, helper modules) are importable by DAG files, as at parse time.
            # lazy: cold start (plugins only with a plugins folder)
            from updraft.plugins import load_plugins_folder

            load_plugins_folder(self.plugins_folder)
            self._plugins_loaded = True
        dag_registry.reset()
        try:
            module = _exec_module(unique_module_name(path), path, source)
            dags = collect_dags(module, dag_registry.registered_dags())
        finally:
            dag_registry.reset()
        for dag in dags:
            dag.fileloc = path
        return {dag.dag_id: dag for dag in dags}


class S3DagLoader(LocalDagLoader):
    """DAG files mirrored from ``s3://bucket/prefix`` into ``workdir`` (only changed objects are downloaded).

    Each load syncs first, so a worker runs what the bucket holds now; the run's pinned ``file_hash`` is compared
    by the caller (a mismatch is logged: the bucket moved on since the run started).
    """

    def __init__(self, s3_client: Any, bucket: str, prefix: str, workdir: str | os.PathLike[str], *,
                 plugins_folder: str | os.PathLike[str] | None = None, reuse_s: float = SYNC_REUSE_S) -> None:
        super().__init__(workdir, plugins_folder=plugins_folder)
        self.s3_client = s3_client
        self.bucket = bucket
        self.prefix = prefix
        self.reuse_s = reuse_s
        self._synced_at: float | None = None

    def prepare(self, relative_fileloc: str, file_hash: str | None = None) -> None:
        # lazy: cold start (S3 sync only for DAGs kept in S3)
        from updraft.parsing.s3 import sync_prefix

        if not self._current(relative_fileloc, file_hash):
            sync_prefix(self.s3_client, self.bucket, self.prefix, self.dags_folder)
            self._synced_at = time.monotonic()

    def load_dag(self, dag_id: str, relative_fileloc: str, file_hash: str | None = None) -> Any:
        self.prepare(relative_fileloc, file_hash)
        return super().load_dag(dag_id, relative_fileloc, file_hash)

    def mirror(self) -> None:
        """Mirror the bucket now, whatever a try asks for: a warm container's first try finds the files (it
        downloads only what changed since) and the S3 client's listing model loaded (~8 ms of CPU a process). That
        try still lists the bucket: a file uploaded after this mirror may be the one it runs."""
        # lazy: cold start (S3 sync only for DAGs kept in S3)
        from updraft.parsing.s3 import sync_prefix

        sync_prefix(self.s3_client, self.bucket, self.prefix, self.dags_folder)

    def _current(self, relative_fileloc: str, file_hash: str | None) -> bool:
        """The copy here is the version the run is pinned to, mirrored moments ago: a warm worker running task
        after task of one run then lists the bucket once per ``reuse_s``, not once per task (the files the DAG
        file imports are at most that old)."""
        if file_hash is None or self._synced_at is None or time.monotonic() - self._synced_at > self.reuse_s:
            return False
        try:
            return hashlib.sha256(Path(self.path_for(relative_fileloc)).read_bytes()).hexdigest() == file_hash
        except OSError:
            return False


def find_task(dag: Any, task_id: str) -> Any:
    try:
        return dag.task_dict[task_id]
    except KeyError:
        raise TaskNotFound(f"Task {task_id!r} not found in DAG {dag.dag_id!r}") from None
