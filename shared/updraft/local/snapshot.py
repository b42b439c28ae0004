"""``--state-dir``: local mode's AWS (the table and the bucket) written to disk and read back at the next start.

moto keeps everything in memory, so a snapshot is taken every few seconds and on stop: the table as DynamoDB
JSON lines (a scan, the items exactly as stored) and the bucket's objects as files, downloading only the
objects whose ETag changed since the last snapshot. Each snapshot replaces the last one whole (written beside
it, then renamed), so a crash mid-write leaves the previous one intact. Between snapshots every write is in the
write journal (``journal``): a snapshot starts a new journal segment before it reads anything and records its
number, and a restore replays the journal from there, so nothing written before a crash is lost.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

from updraft.local.journal import WriteJournal

TABLE_FILE = "table.jsonl"
OBJECTS_DIR = "objects"
MANIFEST = "objects.json"
# Each object's user metadata (the DAGs folder marks what it uploaded, so a restart knows what it may delete).
METADATA = "metadata.json"
JOURNAL_FROM = "journal_from"  # the first journal segment the snapshot may not hold


def map_binary(value: Any, convert: Any) -> Any:
    """Apply ``convert`` to every binary in a DynamoDB-JSON value (``B``, ``BS``, nested in ``L`` and ``M``)."""
    if isinstance(value, dict):
        out = {}
        for kind, inner in value.items():
            if kind == "B":
                out[kind] = convert(inner)
            elif kind == "BS":
                out[kind] = [convert(v) for v in inner]
            elif kind == "L":
                out[kind] = [map_binary(v, convert) for v in inner]
            elif kind == "M":
                out[kind] = {k: map_binary(v, convert) for k, v in inner.items()}
            else:
                out[kind] = inner
        return out
    return value


def encode_item(item: dict[str, Any]) -> str:
    return json.dumps({name: map_binary(value, lambda b: base64.b64encode(b).decode()) for name, value in item.items()},
                      separators=(",", ":"))


def decode_item(line: str) -> dict[str, Any]:
    return {name: map_binary(value, base64.b64decode) for name, value in json.loads(line).items()}


class StateDir:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).resolve()
        self.current = self.path / "snapshot"
        self.journal = WriteJournal(self.path / "journal")

    def exists(self) -> bool:
        return (self.current / TABLE_FILE).is_file() or bool(self.journal.segments())

    # -- save ----------------------------------------------------------------------------------------------------
    def save(self, dynamodb: Any, s3: Any, table: str, bucket: str) -> dict[str, int]:
        self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
        since = self.journal.rotate()  # before anything is read: every write the reads may miss is from here on
        staging = self.path / "snapshot.new"
        shutil.rmtree(staging, ignore_errors=True)
        (staging / OBJECTS_DIR).mkdir(parents=True)
        (staging / JOURNAL_FROM).write_text(str(since))
        items = 0
        with (staging / TABLE_FILE).open("w") as out:
            for page in dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
                for item in page.get("Items", []):
                    out.write(encode_item(item) + "\n")
                    items += 1
        previous = self._manifest(self.current)
        previous_metadata = self._metadata(self.current)
        manifest: dict[str, str] = {}
        metadata: dict[str, dict[str, str]] = {}
        downloaded = 0
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for obj in page.get("Contents", []):
                key, etag = obj["Key"], obj["ETag"]
                target = staging / OBJECTS_DIR / key
                target.parent.mkdir(parents=True, exist_ok=True)
                old = self.current / OBJECTS_DIR / key
                if previous.get(key) == etag and old.is_file():
                    shutil.copyfile(old, target)  # unchanged: no request to the embedded AWS
                    meta = previous_metadata.get(key)
                else:
                    response = s3.get_object(Bucket=bucket, Key=key)
                    target.write_bytes(response["Body"].read())
                    meta = response.get("Metadata")
                    downloaded += 1
                manifest[key] = etag
                if meta:
                    metadata[key] = meta
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=0, sort_keys=True))
        (staging / METADATA).write_text(json.dumps(metadata, indent=0, sort_keys=True))
        old_dir = self.path / "snapshot.old"
        shutil.rmtree(old_dir, ignore_errors=True)
        if self.current.exists():
            self.current.rename(old_dir)
        staging.rename(self.current)
        shutil.rmtree(old_dir, ignore_errors=True)
        self.journal.drop_before(since)
        return {"items": items, "objects": len(manifest), "downloaded": downloaded}

    @staticmethod
    def _manifest(folder: Path) -> dict[str, str]:
        try:
            return json.loads((folder / MANIFEST).read_text())
        except (FileNotFoundError, ValueError):
            return {}

    @staticmethod
    def _metadata(folder: Path) -> dict[str, dict[str, str]]:
        try:
            return json.loads((folder / METADATA).read_text())
        except (FileNotFoundError, ValueError):
            return {}

    # -- restore -------------------------------------------------------------------------------------------------
    def restore(self, dynamodb: Any, s3: Any, table: str, bucket: str) -> dict[str, int]:
        """Write the snapshot into a fresh table and bucket (before the bucket notifies anyone), then the journal's
        writes made since it began; returns how many items and objects each gave."""
        counts = {"items": 0, "objects": 0}
        if (self.current / TABLE_FILE).is_file():
            counts = self._restore_snapshot(dynamodb, s3, table, bucket)
        try:
            since = int((self.current / JOURNAL_FROM).read_text())
        except (FileNotFoundError, ValueError):
            since = 0
        replayed = self.journal.replay(dynamodb, s3, table, bucket, since)
        return {**counts, "journaled_items": replayed["items"], "journaled_objects": replayed["objects"]}

    def _restore_snapshot(self, dynamodb: Any, s3: Any, table: str, bucket: str) -> dict[str, int]:
        items = [decode_item(line) for line in (self.current / TABLE_FILE).read_text().splitlines() if line]
        for start in range(0, len(items), 25):
            pending: dict[str, Any] = {table: [{"PutRequest": {"Item": item}} for item in items[start:start + 25]]}
            while pending:
                pending = dynamodb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
        objects = 0
        root = self.current / OBJECTS_DIR
        metadata = self._metadata(self.current)
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            key = path.relative_to(root).as_posix()
            s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes(), Metadata=metadata.get(key, {}))
            objects += 1
        return {"items": len(items), "objects": objects}
