"""The DAG-file aggregate: the DAGs each file owns and its import errors (listed only while it has some)."""

from __future__ import annotations

from typing import Any

from updraft.store import keys
from updraft.store.api import FileRecord
from updraft.store.base import StoreBase
from updraft.store.models import FileItem
from updraft.store.writes import conditional

# Bounds that keep a file's record inside one item whatever the file raised.
_MAX_STACKTRACE = 16_000
_MAX_IMPORT_ERRORS = 100


def _trimmed(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    stored = []
    for original in errors[:_MAX_IMPORT_ERRORS]:
        error = dict(original)
        if len(error.get("stacktrace") or "") > _MAX_STACKTRACE:
            error["stacktrace"] = "...\n" + error["stacktrace"][-_MAX_STACKTRACE:]
        stored.append(error)
    return stored


def _compared(record: FileRecord) -> tuple[object, ...]:
    """What a parse changes; ``parsed_at`` is left out so a redelivered event compares equal."""
    return (record.file_hash, record.file_version, record.dag_ids, record.import_errors, record.parse_failures,
            record.failed_version)


def _record_from_item(item: FileItem) -> FileRecord:
    return FileRecord(relative_path=item.relative_path, file_hash=item.file_hash, file_version=item.file_version,
                      dag_ids=list(item.dag_ids or []), import_errors=list(item.import_errors or []),
                      parsed_at=item.parsed_at, parse_failures=int(item.parse_failures or 0),
                      failed_version=item.failed_version)


class FileStore(StoreBase):
    def get_file_record(self, relative_path: str) -> FileRecord | None:
        F = self.models.file
        try:
            item = F.get(keys.file_pk(relative_path), keys.META, consistent_read=True)
        except F.DoesNotExist:
            return None
        return _record_from_item(item)

    def put_file_record(self, record: FileRecord, *, previous: FileRecord | None) -> bool:
        F = self.models.file
        stored = _trimmed(record.import_errors)
        path = record.relative_path
        item = F(keys.file_pk(path), keys.META, relative_path=path, file_hash=record.file_hash,
                 file_version=record.file_version, dag_ids=sorted(record.dag_ids), import_errors=stored or None,
                 parsed_at=record.parsed_at, parse_failures=record.parse_failures or None,
                 failed_version=record.failed_version)
        if stored:  # sparse: only files with import errors are listed
            item.list_pk = keys.import_errors_list_pk(path, self.config.index_shards)
            item.list_sk = path
        written = FileRecord(path, record.file_hash, record.file_version, sorted(record.dag_ids), stored,
                             parse_failures=record.parse_failures, failed_version=record.failed_version)
        if previous is not None and _compared(previous) == _compared(written):
            return False  # a redelivered event: nothing changed, so nothing is written (parsed_at keeps the first)
        item.save()
        return True

    def delete_file_record(self, relative_path: str) -> None:
        F = self.models.file
        conditional(lambda: F(keys.file_pk(relative_path), keys.META).delete())

    def list_import_errors(self) -> list[dict[str, Any]]:
        F = self.models.file
        found = self._listed_keys(F.list_index, (keys.import_errors_shard_pk(i) for i in self._shards()))
        out = []
        for item in self._batch_get(F, found):
            for error in item.import_errors or []:
                out.append({**error, "timestamp": item.parsed_at.isoformat() if item.parsed_at else None})
        return sorted(out, key=lambda e: (e["filename"], e.get("dag_id") or "", e["message"]))
