"""``--state-dir``'s write journal: every write to local mode's table and bucket, on disk before it is answered.

The snapshot (``snapshot``) is taken every few seconds; a ``kill -9`` between two would lose what was written
since, among it writes the API had answered 2xx (a triggered run). So each write that reaches the embedded AWS is
also appended here, from inside the request (``concurrent_moto.ConcurrentMoto``), before its answer goes back:
what anyone was told was written is on disk (in the OS's cache, which a killed process does not lose).

What is appended is the written item's (or object's) state *after* the request, read from moto, not the request:
replaying states is idempotent and needs no condition or update expression evaluated again, so the journal may
overlap the snapshot. It is cut into segments: a snapshot starts a new segment before it reads anything and keeps
that segment's number (``since``); at the next start the snapshot is restored, then every segment from ``since``
on is replayed in order, each key ending in its last written state. Segments older than the newest snapshot are
deleted. Object bodies go to files of their own (``blobs/``), written before the line that names them; a line cut
by the kill is ignored (its request was not answered).

Cost: a moto read of the item and one ``write`` of a line per request (measured in the module's test).
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

SEGMENT_SUFFIX = ".jsonl"
BLOBS = "blobs"
DYNAMODB_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})


def _segment_number(path: Path) -> int | None:
    stem = path.name[:-len(SEGMENT_SUFFIX)] if path.name.endswith(SEGMENT_SUFFIX) else ""
    return int(stem) if stem.isdigit() else None


class WriteJournal:
    """Segments ``<n>.jsonl`` in ``folder``; one line per written item or object (see the module docstring)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._lock = threading.Lock()
        self._out: IO[str] | None = None
        self._segment = 0
        self._blobs = 0

    def segments(self) -> list[tuple[int, Path]]:
        found = [(n, path) for path in self.folder.glob(f"*{SEGMENT_SUFFIX}") if (n := _segment_number(path))
                 is not None]
        return sorted(found)

    def rotate(self) -> int:
        """Start a new segment (after every one on disk) and return its number: what is written from now on."""
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            (self.folder / BLOBS).mkdir(exist_ok=True, mode=0o700)
            if self._out is not None:
                self._out.close()
            self._segment = max([self._segment, *(n for n, _ in self.segments())]) + 1
            self._blobs = 0
            # Line-buffered: each line reaches the OS when it is written, before the request is answered.
            self._out = (self.folder / f"{self._segment:08d}{SEGMENT_SUFFIX}").open("a", buffering=1)
            return self._segment

    def close(self) -> None:
        with self._lock:
            if self._out is not None:
                self._out.close()
                self._out = None

    def drop_before(self, segment: int) -> None:
        """Delete the segments (and their bodies) a snapshot made since ``segment`` began has made redundant."""
        for number, path in self.segments():
            if number < segment:
                path.unlink(missing_ok=True)
        for blob in (self.folder / BLOBS).glob("*"):
            head = blob.name.split("-", 1)[0]
            if head.isdigit() and int(head) < segment:
                blob.unlink(missing_ok=True)

    # -- writing -------------------------------------------------------------------------------------------------
    def item(self, table: str, key: dict[str, Any], item: dict[str, Any] | None) -> None:
        """The item at ``key`` (DynamoDB JSON as on the wire, binaries base64) is now ``item`` (None: deleted)."""
        self._append({"t": table, "k": key, "i": item})

    def obj(self, bucket: str, key: str, body: bytes | None, metadata: dict[str, str] | None = None) -> None:
        """The object at ``key`` now holds ``body`` with user ``metadata`` (None: deleted)."""
        with self._lock:
            if self._out is None:
                return
            blob = None
            if body is not None:
                self._blobs += 1
                blob = f"{self._segment:08d}-{self._blobs}"
                (self.folder / BLOBS / blob).write_bytes(body)
            self._out.write(json.dumps({"b": bucket, "o": key, "f": blob, "m": metadata or {}},
                                       separators=(",", ":")) + "\n")

    def _append(self, line: dict[str, Any]) -> None:
        text = json.dumps(line, separators=(",", ":")) + "\n"
        with self._lock:
            if self._out is not None:
                self._out.write(text)

    # -- replaying -----------------------------------------------------------------------------------------------
    def lines(self, since: int) -> Iterator[dict[str, Any]]:
        """Every complete line of the segments from ``since`` on, in the order written."""
        for number, path in self.segments():
            if number < since:
                continue
            for raw in path.read_text().splitlines():
                with contextlib.suppress(ValueError):  # the last line of a killed process may be cut short
                    yield json.loads(raw)

    def replay(self, dynamodb: Any, s3: Any, table: str, bucket: str, since: int) -> dict[str, int]:
        """Write every journaled state of ``table`` and ``bucket`` from segment ``since`` on, in order."""
        # lazy: circle (local.snapshot imports this module)
        from updraft.local.snapshot import decode_item

        items = objects = 0
        for line in self.lines(since):
            if line.get("t") == table:
                if line["i"] is None:
                    dynamodb.delete_item(TableName=table, Key=decode_item(json.dumps(line["k"])))
                else:
                    dynamodb.put_item(TableName=table, Item=decode_item(json.dumps(line["i"])))
                items += 1
            elif line.get("b") == bucket:
                if line["f"] is None:
                    s3.delete_object(Bucket=bucket, Key=line["o"])
                else:
                    body = (self.folder / BLOBS / line["f"]).read_bytes()
                    s3.put_object(Bucket=bucket, Key=line["o"], Body=body, Metadata=line["m"])
                objects += 1
        return {"items": items, "objects": objects}


class MotoJournalTap:
    """Reads, from moto's own backends, the state a write request left, and journals it (``ConcurrentMoto`` calls
    it inside the request's locks, so each key's lines are in the order its writes were made)."""

    def __init__(self, journal: WriteJournal, table: str, bucket: str) -> None:
        self.journal = journal
        self.table = table
        self.bucket = bucket

    def dynamodb(self, operation: str, request: dict[str, Any]) -> None:
        if operation not in DYNAMODB_WRITES:
            return
        for table, key_or_item in _written(operation, request):
            if table != self.table:
                continue
            moto_table = _moto_table(table)
            if moto_table is None:
                return
            key = {name: key_or_item[name] for name in (moto_table.hash_key_attr, moto_table.range_key_attr)
                   if name and name in key_or_item}
            found = moto_table.get_item(*_key_values(moto_table, key))
            self.journal.item(table, key, _wire(found.to_json()["Attributes"]) if found is not None else None)

    def s3(self, method: str, path: str) -> None:
        """After a PUT, POST or DELETE on ``/<bucket>/<key>`` (path-style, as local mode's clients address it;
        ``path`` decoded). Any such request (a part upload too) journals the key's state: harmless when unchanged."""
        if method not in ("PUT", "POST", "DELETE") or not path.startswith(f"/{self.bucket}/"):
            return
        key = path[len(self.bucket) + 2:]
        if not key:
            return
        found = _moto_object(self.bucket, key)
        if found is None:
            self.journal.obj(self.bucket, key, None)
        else:
            self.journal.obj(self.bucket, key, bytes(found.value), _user_metadata(found.metadata))


def _written(operation: str, request: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(table, key or whole item) of every item a write request names."""
    if operation == "PutItem":
        yield request.get("TableName", ""), request.get("Item") or {}
    elif operation in ("UpdateItem", "DeleteItem"):
        yield request.get("TableName", ""), request.get("Key") or {}
    elif operation == "BatchWriteItem":
        for table, writes in (request.get("RequestItems") or {}).items():
            for write in writes:
                if "PutRequest" in write:
                    yield table, write["PutRequest"].get("Item") or {}
                elif "DeleteRequest" in write:
                    yield table, write["DeleteRequest"].get("Key") or {}
    elif operation == "TransactWriteItems":
        for entry in request.get("TransactItems") or []:
            for kind, body in entry.items():
                if kind == "Put":
                    yield body.get("TableName", ""), body.get("Item") or {}
                elif kind in ("Update", "Delete"):
                    yield body.get("TableName", ""), body.get("Key") or {}


def _wire(attributes: dict[str, Any]) -> dict[str, Any]:
    """moto's item as DynamoDB JSON: it keeps a binary as the base64 text it was sent, or (nested, or computed)
    as bytes; every one becomes base64 text, as on the wire."""
    # lazy: circle (local.snapshot imports this module)
    from updraft.local.snapshot import map_binary

    def text(value: Any) -> Any:
        return base64.b64encode(value).decode() if isinstance(value, bytes) else value

    return {name: map_binary(value, text) for name, value in attributes.items()}


def _moto_table(name: str) -> Any:
    from moto.dynamodb.models import dynamodb_backends

    for account in list(dict.values(dynamodb_backends)):
        for backend in list(dict.values(account)):
            found = backend.tables.get(name)
            if found is not None:
                return found
    return None


def _key_values(table: Any, key: dict[str, Any]) -> tuple[Any, Any]:
    from moto.dynamodb.models.dynamo_type import DynamoType

    hash_value = DynamoType(key[table.hash_key_attr])
    range_value = DynamoType(key[table.range_key_attr]) if table.range_key_attr in key else None
    return hash_value, range_value


def _moto_object(bucket: str, key: str) -> Any:
    from moto.s3.models import FakeKey, s3_backends

    for account in list(dict.values(s3_backends)):
        for backend in list(dict.values(account)):
            found = backend.buckets.get(bucket)
            if found is not None:
                latest = found.keys.get(key)
                return latest if isinstance(latest, FakeKey) else None
    return None


def _user_metadata(metadata: Any) -> dict[str, str]:
    """The object's user metadata as ``put_object(Metadata=...)`` takes it (moto keeps them as headers)."""
    prefix = "x-amz-meta-"
    return {name[len(prefix):]: str(value) for name, value in dict(metadata or {}).items()
            if name.lower().startswith(prefix)}
