"""The DAGs folder mirrored to the bucket's DAGs prefix, as a deployment pipeline would upload it.

Each pass uploads what changed (content, not timestamps: an editor's save of the same bytes uploads nothing)
and deletes what was removed; the bucket's notifications then make the parser look at exactly those files.
Non-Python files go too (SQL and shell templates, ``.airflowignore``): the workers read them next to the DAG.

The folder owns only the objects it put there, which it marks (``x-amz-meta-updraft-source: dags-folder``): a
file added with ``updraft dags upload`` is the bucket's own and is never deleted because the folder lacks it, also
after a restart with ``--state-dir`` (which keeps the bucket). A folder file of the same name replaces it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

SKIPPED_DIRS = {"__pycache__", ".git", ".venv", "node_modules"}
SOURCE_METADATA = "updraft-source"  # the object metadata that marks what the folder uploaded
FROM_FOLDER = "dags-folder"


@dataclass
class SyncReport:
    uploaded: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.uploaded or self.removed)


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def object_removed_event(bucket: str, key: str, version_id: str | None, region: str) -> dict[str, Any]:
    """The S3 notification a delete in a versioned bucket sends (``ObjectRemoved:DeleteMarkerCreated``)."""
    return {"Records": [{
        "eventVersion": "2.1", "eventSource": "aws:s3", "awsRegion": region,
        "eventTime": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
        "eventName": "ObjectRemoved:DeleteMarkerCreated",
        "s3": {"s3SchemaVersion": "1.0", "configurationId": "dag-files",
               "bucket": {"name": bucket, "arn": f"arn:aws:s3:::{bucket}"},
               "object": {"key": quote_plus(key, safe="/"), "versionId": version_id}},
    }]}


class DagsFolderSync:
    """``on_removed(key, version_id)`` is told of every delete: moto sends no notification for the delete
    marker a versioned bucket creates (S3 does), so local mode sends it in its place."""

    def __init__(self, s3: Any, bucket: str, prefix: str, folder: str | os.PathLike[str],
                 on_removed: Callable[[str, str | None], None] | None = None) -> None:
        self.on_removed = on_removed
        self.s3 = s3
        self.bucket = bucket
        self.prefix = prefix
        self.folder = Path(folder).resolve()
        self._remote: dict[str, str] | None = None  # relative path -> ETag (an MD5 for single-part uploads)
        self._owned: set[str] = set()  # objects known to come from the folder
        self._foreign: set[str] = set()  # objects known to come from elsewhere (``dags upload``)
        self._stat: dict[str, tuple[int, int, str]] = {}  # relative path -> (mtime_ns, size, md5)

    def _local_files(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for dirpath, dirnames, filenames in os.walk(self.folder):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS and not d.startswith("."))
            for name in filenames:
                if name.endswith((".pyc", "~")) or name.startswith(".#"):
                    continue
                path = Path(dirpath, name)
                relative = path.relative_to(self.folder).as_posix()
                try:
                    stat = path.stat()
                except FileNotFoundError:  # removed while we walked
                    continue
                cached = self._stat.get(relative)
                if cached and cached[:2] == (stat.st_mtime_ns, stat.st_size):
                    found[relative] = cached[2]
                    continue
                digest = _md5(path)
                self._stat[relative] = (stat.st_mtime_ns, stat.st_size, digest)
                found[relative] = digest
        return found

    def _list_remote(self) -> dict[str, str]:
        remote: dict[str, str] = {}
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.prefix):
            for obj in page.get("Contents", []):
                remote[obj["Key"][len(self.prefix):]] = obj["ETag"].strip('"')
        return remote

    def _from_folder(self, relative: str) -> bool:
        """Whether the object was put by the folder (by this process, or by an earlier one on a kept bucket)."""
        try:
            head = self.s3.head_object(Bucket=self.bucket, Key=self.prefix + relative)
        except self.s3.exceptions.ClientError:
            return True  # already gone: deleting again is harmless and reports the removal
        return bool(head.get("Metadata", {}).get(SOURCE_METADATA) == FROM_FOLDER)

    def sync_once(self) -> SyncReport:
        if self._remote is None:
            self._remote = self._list_remote()
        report = SyncReport()
        local = self._local_files()
        for relative, digest in sorted(local.items()):
            if self._remote.get(relative) == digest:
                continue
            self.s3.put_object(Bucket=self.bucket, Key=self.prefix + relative,
                               Body=(self.folder / relative).read_bytes(), Metadata={SOURCE_METADATA: FROM_FOLDER})
            self._remote[relative] = digest
            self._owned.add(relative)
            self._foreign.discard(relative)
            report.uploaded.append(relative)
        for relative in sorted(set(self._remote) - set(local) - self._foreign):
            if relative not in self._owned and not self._from_folder(relative):
                self._foreign.add(relative)
                continue
            response = self.s3.delete_object(Bucket=self.bucket, Key=self.prefix + relative)
            if self.on_removed is not None:
                self.on_removed(self.prefix + relative, response.get("VersionId"))
            del self._remote[relative]
            self._owned.discard(relative)
            self._stat.pop(relative, None)
            report.removed.append(relative)
        return report
