"""The connection aggregate: one item per Airflow Connection; its password and extra encrypted with the
environment's KMS key (they are where credentials live), the other fields readable for listings.

``CONNECTION#<conn_id>`` / ``META``, listed through the keys-only list index under ``CONNECTIONS``. Puts and
deletes are single-item writes, idempotent as the variable aggregate's.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from updraft.store import keys
from updraft.store.base import StoreBase
from updraft.store.item_size import check_item_size
from updraft.store.models import ConnectionItem
from updraft.store.writes import conditional, item_absent, item_present


@dataclass
class ConnectionRecord:
    conn_id: str
    conn_type: str | None = None
    description: str | None = None
    host: str | None = None
    schema: str | None = None
    login: str | None = None
    password: str | None = None
    port: int | None = None
    extra: str | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


class ConnectionStore(StoreBase):
    def _connection_item(self, conn_id: str) -> ConnectionItem | None:
        C = self.models.connection
        try:
            return C.get(keys.connection_pk(conn_id), keys.META, consistent_read=True)
        except C.DoesNotExist:
            return None

    def _connection_record(self, item: ConnectionItem) -> ConnectionRecord:
        raw = bytes(item.secret or b"")
        if item.encrypted and self.cipher is None:
            raise ValueError(f"connection {item.conn_id!r} is encrypted and this store has no KMS key to read it")
        text = self.cipher.decrypt(raw, item=item.pk) if item.encrypted and self.cipher is not None else raw.decode()
        secret = json.loads(text) if text else {}
        return ConnectionRecord(conn_id=item.conn_id, conn_type=item.conn_type, description=item.description,
                                host=item.host, schema=item.schema, login=item.login,
                                port=int(item.port) if item.port is not None else None,
                                password=secret.get("password"), extra=secret.get("extra"))

    def get_connection(self, conn_id: str) -> ConnectionRecord | None:
        item = self._connection_item(conn_id)
        return self._connection_record(item) if item is not None else None

    def put_connection(self, record: ConnectionRecord, *, only_if_new: bool = False) -> ConnectionRecord | None:
        """Create or replace the connection (every field as given); with ``only_if_new``, None (nothing
        written) when it exists. :class:`~updraft.store.errors.ValueTooLarge` when its fields do not fit one item
        (or, with a KMS key, its password and extra are over KMS's 4 KB)."""
        pk = keys.connection_pk(record.conn_id)
        secret = json.dumps({"password": record.password, "extra": record.extra})
        stored = self.cipher.encrypt(secret, item=pk) if self.cipher is not None else secret.encode("utf-8")
        item = self.models.connection(
            pk, keys.META, conn_id=record.conn_id, conn_type=record.conn_type, description=record.description,
            host=record.host, schema=record.schema, login=record.login, port=record.port, secret=stored,
            encrypted=self.cipher is not None, list_pk=keys.CONNECTIONS_LIST_PK, list_sk=record.conn_id)
        check_item_size(item, f"connection {record.conn_id!r}")
        if only_if_new:
            return record if conditional(lambda: item.save(item_absent(self.models.connection))) else None
        item.save()
        return record

    def delete_connection(self, conn_id: str) -> bool:
        """False when there was no such connection."""
        C = self.models.connection
        row = C(keys.connection_pk(conn_id), keys.META)
        return conditional(lambda: row.delete(item_present(C)))

    def list_connections(self) -> list[ConnectionRecord]:
        C = self.models.connection
        found = self._listed_keys(C.list_index, [keys.CONNECTIONS_LIST_PK])
        records = [self._connection_record(i) for i in self._batch_get(C, sorted(found))]
        return sorted(records, key=lambda r: r.conn_id)
