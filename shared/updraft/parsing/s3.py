"""Parse the DAG files named by an S3 event (the parser Lambda's entry point).

A DAG file may import its siblings, so the file cannot be parsed alone: the
bucket's DAGs prefix (``UPDRAFT_DAGS_PREFIX``) is mirrored into a local folder first. A warm Lambda
container keeps that folder (and the warm parser) between invocations, so
only objects whose ETag changed are downloaded again, and local files whose
objects were deleted are removed so a stale sibling can never be imported.

The mirror is writable by the code it holds (a DAG file at parse time, a task in a warm worker), so an unchanged
ETag is not enough to reuse a local copy: this process remembers the SHA-256 of what S3 served for each file and
downloads again any copy whose content no longer matches (what was on disk before this process started is never
trusted). Cached bytecode is dropped at every sync, since a planted ``.pyc`` would be imported instead of its
checked source.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from updraft.config import UpdraftConfig
from updraft.model.parse_results import ParsedFile
from updraft.parsing.options import FileJob, ParseOptions
from updraft.resources import DAGS_PREFIX

# Per mirror folder, per relative path: (the object's ETag, the SHA-256 of the bytes S3 served). Kept in this
# process's memory only: a file in the mirror can be rewritten by the code it holds, the record of it cannot.
_served: dict[str, dict[str, tuple[str, str]]] = {}


PARSER_MIRROR = "updraft-dags"


def default_workdir() -> str:
    """The parser's mirror in the work folder: ``UPDRAFT_WORK_DIR`` (local mode's private folder), else the
    temporary folder (Lambda's /tmp: the only writable place there, and it survives warm invocations)."""
    return UpdraftConfig.from_env().mirror_folder(PARSER_MIRROR)


class DagFileNotFound(FileNotFoundError):
    """The key named by the event no longer exists (deleted since the event)."""


@dataclass
class SyncReport:
    downloaded: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    etags: dict[str, str] = field(default_factory=dict)


def _relative(key: str, prefix: str) -> str | None:
    """The key's path under ``prefix``, or None when it must not be mirrored.

    Keys are user-controlled: ``..``, absolute paths and folder markers are
    refused so a crafted key can never write outside the work folder.
    """
    if not key.startswith(prefix) or key.endswith("/"):
        return None
    rel = key[len(prefix) :]
    parts = PurePosixPath(rel).parts
    if not rel or rel.startswith("/") or any(p in ("..", ".", "") for p in parts):
        return None
    if "__pycache__" in parts:
        return None
    return "/".join(parts)


def folder_prefix(prefix: str) -> str:
    """``prefix`` as a folder: ``code`` must not take in ``codex/x.py``."""
    return prefix if not prefix or prefix.endswith("/") else prefix + "/"


def relative_key(key: str, prefix: str) -> str | None:
    """The DAG file path (relative to the DAGs folder) an S3 key stands for, or None if it is not one."""
    return _relative(key, folder_prefix(prefix))


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _write_atomically(path: Path, body: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".updraft-dl-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _drop_all_bytecode(root: Path) -> None:
    """Remove every cached bytecode file of the mirror.

    CPython validates a .pyc by the source's size and whole-second mtime only: a sibling replaced within the same
    second by one of the same size would be imported from stale bytecode, and code that writes a .pyc with the
    right header would be imported instead of the checked source.
    """
    for cache in root.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)


def sync_prefix(s3_client: Any, bucket: str, prefix: str, workdir: str | Path) -> SyncReport:
    """Mirror ``s3://bucket/prefix`` into ``workdir``, downloading only changed objects."""
    root = Path(workdir)
    root.mkdir(parents=True, exist_ok=True)
    served = _served.setdefault(str(root.absolute()), {})
    report = SyncReport()
    listed: dict[str, str] = {}
    paginator = s3_client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            rel = _relative(obj["Key"], prefix)
            if rel is not None:
                listed[rel] = obj["ETag"]

    _drop_all_bytecode(root)
    for rel, etag in listed.items():
        local = root / rel
        known = served.get(rel)
        if known is not None and known[0] == etag and _sha256(local) == known[1]:
            report.unchanged += 1
            continue
        response = s3_client.get_object(Bucket=bucket, Key=prefix + rel)
        body = response["Body"].read()
        _write_atomically(local, body)
        listed[rel] = response.get("ETag", etag)
        served[rel] = (listed[rel], hashlib.sha256(body).hexdigest())
        report.downloaded.append(rel)

    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            local = Path(dirpath) / name
            rel = local.relative_to(root).as_posix()
            if "__pycache__" in local.parts or name.startswith(".updraft-dl-"):
                continue
            if rel not in listed:
                local.unlink(missing_ok=True)
                served.pop(rel, None)
                report.deleted.append(rel)
        for name in dirnames:
            sub = Path(dirpath) / name
            if name != "__pycache__" and not any(sub.iterdir()):
                with contextlib.suppress(OSError):
                    sub.rmdir()

    report.etags = listed
    return report


def parse_s3_dag_file(
    s3_client: Any,
    bucket: str,
    key: str,
    *,
    prefix: str = DAGS_PREFIX,
    workdir: str | Path | None = None,
    options: ParseOptions | None = None,
    ignore_syntax: str = "glob",
) -> ParsedFile:
    """Parse the DAG file at ``s3://bucket/key`` with its siblings available (see :func:`parse_s3_dag_files`).

    Raises :class:`DagFileNotFound` if the key is gone.
    """
    for _key, result in parse_s3_dag_files(s3_client, bucket, [key], prefix=prefix, workdir=workdir,
                                           options=options, ignore_syntax=ignore_syntax):
        if isinstance(result, DagFileNotFound):
            raise result
        return result
    raise AssertionError("unreachable: one key gives one result")


def parse_s3_dag_files(
    s3_client: Any,
    bucket: str,
    keys: Sequence[str],
    *,
    prefix: str = DAGS_PREFIX,
    workdir: str | Path | None = None,
    options: ParseOptions | None = None,
    ignore_syntax: str = "glob",
    timetable_contexts: Mapping[str, str] | None = None,
) -> Iterator[tuple[str, ParsedFile | DagFileNotFound]]:
    """Parse the DAG files at ``s3://bucket/<key>``, all at once, yielding ``(key, result)`` as each finishes.

    The folder is mirrored once for all of them, then the files run concurrently (``options.workers`` at a
    time), so a file that hangs at import delays no other. Always parses the *latest* object (fetched fresh after
    the sync): events can arrive out of order, and parsing an older version named by a late event would
    overwrite newer DAGs. A result's ``file_version`` is the object's VersionId when the bucket is versioned,
    else its ETag. A file the folder parse would skip (``.airflowignore``, safe mode) comes back with no DAGs and
    the reason in ``logs``: it defines no DAGs as far as Airflow is concerned. A key that is gone comes back as
    a :class:`DagFileNotFound`. Duplicate dag_ids across files are not checked here: that needs the other
    files' stored results. ``timetable_contexts`` (relative path -> ``TimetableContext`` JSON) says where each
    file's custom timetables are evaluated from. Raises ``ValueError`` (before any work) for a key that is not
    a ``.py`` file under ``prefix``.
    """
    prefix = folder_prefix(prefix)
    relatives = {}
    for key in keys:
        rel = _relative(key, prefix)
        if rel is None or not rel.endswith(".py"):
            raise ValueError(f"s3://{bucket}/{key} is not a .py file under the {prefix!r} prefix")
        relatives[key] = rel
    options = options or ParseOptions()
    root = Path(workdir or default_workdir()).absolute()
    sync_prefix(s3_client, bucket, prefix, root)

    jobs: list[FileJob] = []
    job_keys: list[str] = []
    for key, rel in relatives.items():
        fetched = _fetch(s3_client, bucket, key, rel, root, options, ignore_syntax)
        if isinstance(fetched, FileJob):
            jobs.append(dataclasses.replace(fetched, timetable_context=(timetable_contexts or {}).get(rel, "")))
            job_keys.append(key)
        else:
            yield key, fetched
    if jobs:
        # lazy: cold start (the parse processes only when files are parsed)
        from updraft.parsing.isolation import shared_parser

        for index, parsed in shared_parser(options).iter_parse(jobs):
            yield job_keys[index], parsed


def _fetch(s3_client: Any, bucket: str, key: str, rel: str, root: Path, options: ParseOptions,
           ignore_syntax: str) -> FileJob | ParsedFile | DagFileNotFound:
    """The key's latest object written into the mirror: the job to parse it, or why it is not parsed."""
    # lazy: cold start (the folder filters only when files are fetched)
    from updraft.parsing.folder import is_excluded, might_contain_dag

    try:
        response = s3_client.get_object(Bucket=bucket, Key=key)
    except s3_client.exceptions.NoSuchKey:
        return DagFileNotFound(f"s3://{bucket}/{key} does not exist")
    body = response["Body"].read()
    local = root / rel
    _write_atomically(local, body)
    digest = hashlib.sha256(body).hexdigest()
    _served.setdefault(str(root), {})[rel] = (str(response.get("ETag", "")), digest)
    version = response.get("VersionId")
    if not version or version == "null":
        version = str(response.get("ETag", "")).strip('"') or None

    reason = None
    if is_excluded(root, local, ignore_syntax=ignore_syntax):
        reason = f"{rel} is excluded by .airflowignore (or is hidden); it was not parsed"
    elif options.safe_mode and not might_contain_dag(local):
        reason = f"{rel} does not mention both 'airflow' and 'dag' (safe mode); it was not parsed"
    if reason is not None:
        return ParsedFile(relative_path=rel, file_hash=digest, logs=reason, file_version=version)
    return FileJob(path=str(local), relative_path=rel, dags_folder=str(root), file_version=version)
