"""Parse one DAG file named by an S3 event (the parser Lambda's entry point).

A DAG file may import its siblings, so the file cannot be parsed alone: the
bucket's DAGs prefix (``UPDRAFT_DAGS_PREFIX``) is mirrored into a local folder first. A warm Lambda
container keeps that folder (and the warm parser) between invocations, so
only objects whose ETag changed are downloaded again, and local files whose
objects were deleted are removed so a stale sibling can never be imported.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from updraft.model.parse_results import ParsedFile
from updraft.parsing.options import FileJob, ParseOptions
from updraft.resources import DAGS_PREFIX

MANIFEST_NAME = ".updraft-s3-manifest.json"


def default_workdir() -> str:
    # /tmp is the only writable place in Lambda; it survives warm invocations.
    return os.path.join(tempfile.gettempdir(), "updraft-dags")


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
    if MANIFEST_NAME in parts:
        return None
    return "/".join(parts)


def folder_prefix(prefix: str) -> str:
    """``prefix`` as a folder: ``code`` must not take in ``codex/x.py``."""
    return prefix if not prefix or prefix.endswith("/") else prefix + "/"


def relative_key(key: str, prefix: str) -> str | None:
    """The DAG file path (relative to the DAGs folder) an S3 key stands for, or None if it is not one."""
    return _relative(key, folder_prefix(prefix))


def _load_manifest(root: Path) -> dict[str, str]:
    try:
        data = json.loads((root / MANIFEST_NAME).read_text())
        return {str(k): str(v) for k, v in data.items()}
    except (OSError, ValueError, AttributeError):
        return {}


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


def _drop_bytecode(path: Path) -> None:
    """Remove cached bytecode of a replaced module.

    CPython validates a .pyc by the source's size and whole-second mtime: a
    sibling replaced within the same second by one of the same size would
    otherwise be imported from stale bytecode.
    """
    cache = path.parent / "__pycache__"
    if cache.is_dir():
        for pyc in cache.glob(f"{path.stem}.*.pyc"):
            pyc.unlink(missing_ok=True)


def sync_prefix(s3_client: Any, bucket: str, prefix: str, workdir: str | Path) -> SyncReport:
    """Mirror ``s3://bucket/prefix`` into ``workdir``, downloading only changed objects."""
    root = Path(workdir)
    root.mkdir(parents=True, exist_ok=True)
    manifest = _load_manifest(root)
    report = SyncReport()
    listed: dict[str, str] = {}
    paginator = s3_client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            rel = _relative(obj["Key"], prefix)
            if rel is not None:
                listed[rel] = obj["ETag"]

    for rel, etag in listed.items():
        local = root / rel
        if manifest.get(rel) == etag and local.is_file():
            report.unchanged += 1
            continue
        response = s3_client.get_object(Bucket=bucket, Key=prefix + rel)
        _write_atomically(local, response["Body"].read())
        _drop_bytecode(local)
        listed[rel] = response.get("ETag", etag)
        report.downloaded.append(rel)

    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            local = Path(dirpath) / name
            rel = local.relative_to(root).as_posix()
            if rel == MANIFEST_NAME or "__pycache__" in local.parts or name.startswith(".updraft-dl-"):
                continue
            if rel not in listed:
                local.unlink(missing_ok=True)
                _drop_bytecode(local)
                report.deleted.append(rel)
        for name in dirnames:
            sub = Path(dirpath) / name
            if name != "__pycache__" and not any(sub.iterdir()):
                with contextlib.suppress(OSError):
                    sub.rmdir()

    _write_atomically(root / MANIFEST_NAME, json.dumps(listed, sort_keys=True).encode())
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
    """Parse the DAG file at ``s3://bucket/key`` with its siblings available.

    Always parses the *latest* object (fetched fresh after the sync): events
    can arrive out of order, and parsing an older version named by a late
    event would overwrite newer DAGs. The result's ``file_version`` is the
    object's VersionId when the bucket is versioned, else its ETag. A file the
    folder parse would skip (``.airflowignore``, safe mode) comes back with no
    DAGs and the reason in ``logs``: it defines no DAGs as far as Airflow is
    concerned. Raises :class:`DagFileNotFound` if the key is gone.
    Duplicate dag_ids across files are not checked here: that needs the
    other files' stored results.
    """
    from updraft.parsing.folder import is_excluded, might_contain_dag

    prefix = folder_prefix(prefix)
    rel = _relative(key, prefix)
    if rel is None or not rel.endswith(".py"):
        raise ValueError(f"s3://{bucket}/{key} is not a .py file under the {prefix!r} prefix")
    options = options or ParseOptions()
    root = Path(workdir or default_workdir()).absolute()
    sync_prefix(s3_client, bucket, prefix, root)

    try:
        response = s3_client.get_object(Bucket=bucket, Key=key)
    except s3_client.exceptions.NoSuchKey as exc:
        raise DagFileNotFound(f"s3://{bucket}/{key} does not exist") from exc
    body = response["Body"].read()
    local = root / rel
    _write_atomically(local, body)
    version = response.get("VersionId")
    if not version or version == "null":
        version = str(response.get("ETag", "")).strip('"') or None

    reason = None
    if is_excluded(root, local, ignore_syntax=ignore_syntax):
        reason = f"{rel} is excluded by .airflowignore (or is hidden); it was not parsed"
    elif options.safe_mode and not might_contain_dag(local):
        reason = f"{rel} does not mention both 'airflow' and 'dag' (safe mode); it was not parsed"
    if reason is not None:
        import hashlib

        return ParsedFile(
            relative_path=rel, file_hash=hashlib.sha256(body).hexdigest(), logs=reason, file_version=version
        )

    job = FileJob(path=str(local), relative_path=rel, dags_folder=str(root), file_version=version)
    from updraft.parsing.isolation import shared_parser

    return shared_parser(options).parse_one(job)
