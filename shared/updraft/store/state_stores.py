"""The task state store and the asset state store (Airflow 3.3's AIP-103): small JSON values a task keeps by key.

Items (``pk`` / ``sk``)::

    task state    TASK_STATE#<dag_id>#<run_id>#<task_id>#<map_index+1>   KEY#<key>   value, updated_at, expires_at
    asset state   ASSET_STATE#<asset_id>                                 KEY#<key>   value, updated_at, last writer

A task instance's state is one partition of its own (Airflow's ``task_state_store`` rows are scoped to
``(dag_run, task_id, map_index)``): every try of the instance reads and writes the same items, so a retry finds
what an earlier try kept (the reattach pattern), each mapped instance has its own partition, and a new run starts
empty. Clearing a task instance keeps its state, as in Airflow (only its expiry or a ``clear`` removes it).

An asset's state is the partition of the asset's id (a stable hash of its name, :func:`asset_id_of`): it is not
scoped to a run, so a watermark written by one run is read by the next.

Expiry: a task state key carries ``expires_at`` (None: never, Airflow's ``NEVER_EXPIRE`` or a retention of 0
days) and, beside it, ``expires`` in epoch seconds, the table's DynamoDB TTL attribute, so DynamoDB deletes
expired keys in the background (Airflow's ``airflow state-store cleanup``). TTL deletion lags (up to days), so
every read checks ``expires_at`` too: an expired key reads as absent the moment it expires. Asset state never
expires (Airflow's retention does not apply to it).

Values are JSON, gzipped inline or in S3 when large (:class:`~updraft.store.blobs.Blobs`, as XComs).
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pynamodb.attributes import BinaryAttribute, JSONAttribute, NumberAttribute, UnicodeAttribute

from updraft import airflow_config
from updraft.model.records import TIKey
from updraft.serialization import canonical_json
from updraft.store.assets import asset_id_of
from updraft.store.attributes import DateTimeAttribute
from updraft.store.base import StoreBase
from updraft.store.config import StoreConfig
from updraft.store.keys import KEY_PREFIX, asset_state_pk, blob_path, state_sk, task_state_pk
from updraft.store.models import Item, _bound, build_models
from updraft.store.tables import TTL_ATTRIBUTE

DEFAULT_RETENTION_DAYS = 30  # Airflow's [state_store] default_retention_days
DEFAULT_MAX_VALUE_BYTES = 65535  # Airflow's [state_store] max_value_storage_bytes


class NegativeRetention(ValueError):
    """``[state_store] default_retention_days`` is negative: no expiry can be computed from it."""


def default_expiry(now: dt.datetime) -> dt.datetime | None:
    """When a task state key written ``now`` without a retention expires: ``[state_store] default_retention_days``
    (``AIRFLOW__STATE_STORE__DEFAULT_RETENTION_DAYS``) later; never with 0; a negative value is an error
    (:class:`NegativeRetention`)."""
    days = airflow_config.get_int("state_store", "default_retention_days", DEFAULT_RETENTION_DAYS)
    if days < 0:
        raise NegativeRetention(f"[state_store] default_retention_days must be >= 0, got {days}. "
                         "Set to 0 to disable expiry.")
    return None if days == 0 else now + dt.timedelta(days=days)


def max_value_bytes() -> int:
    """``[state_store] max_value_storage_bytes``: the REST API refuses a larger value, a task logs a warning."""
    return airflow_config.get_int("state_store", "max_value_storage_bytes", DEFAULT_MAX_VALUE_BYTES)


class StateItem(Item):
    """One key of a task instance's or an asset's state."""

    key = UnicodeAttribute()
    data = BinaryAttribute(null=True, legacy_encoding=False)  # gzip of the JSON value
    s3_key = UnicodeAttribute(null=True)
    updated_at = DateTimeAttribute()
    expires_at = DateTimeAttribute(null=True)
    expires = NumberAttribute(null=True, attr_name=TTL_ATTRIBUTE)  # epoch seconds: DynamoDB's TTL deletes it
    # The task instance a task state key belongs to; for an asset state key, the asset and who wrote it last.
    dag_id = UnicodeAttribute(null=True)
    run_id = UnicodeAttribute(null=True)
    task_id = UnicodeAttribute(null=True)
    map_index = NumberAttribute(null=True)
    asset_id = NumberAttribute(null=True)
    last_updated_by = JSONAttribute(null=True)  # {"kind": "task", "dag_id", "run_id", "task_id", "map_index"}


@functools.cache
def state_model(config: StoreConfig) -> type[StateItem]:
    """The state item class on ``config``'s table, sharing the config's one pynamodb connection."""
    model = _bound(StateItem, config)
    model._connection = build_models(config).dag_meta._connection
    return model


@dataclass(frozen=True)
class StateEntry:
    """One stored key, as Airflow's REST API shows it (``TaskStateStoreResponse``/``AssetStateStoreResponse``)."""

    key: str
    value: Any
    updated_at: dt.datetime
    expires_at: dt.datetime | None = None
    last_updated_by: dict[str, Any] | None = None


class StateStore(StoreBase):
    @property
    def _state_model(self) -> type[StateItem]:
        return state_model(self.config)

    # -- task state ---------------------------------------------------------------------------------------------
    def get_task_state(self, key: TIKey, state_key: str, *, now: dt.datetime) -> StateEntry | None:
        """The key's entry, or None when it is absent or expired (TTL deletion lags; expiry is exact here)."""
        return self._state_get(task_state_pk(key), state_key, now)

    def list_task_state(self, key: TIKey, *, now: dt.datetime) -> list[StateEntry]:
        """Every unexpired key of the task instance, by key."""
        return [self._state_entry(item) for item in self._state_items(task_state_pk(key)) if not _expired(item, now)]

    def set_task_state(self, key: TIKey, state_key: str, value: Any, *, expires_at: dt.datetime | None,
                       now: dt.datetime) -> None:
        """Create or overwrite the key (one put: idempotent, the last write wins as in Airflow)."""
        self._state_put(task_state_pk(key), state_key, value, now=now, expires_at=expires_at, dag_id=key.dag_id,
                  run_id=key.run_id, task_id=key.task_id, map_index=key.map_index,
                  blob=blob_path("state", "task", key.dag_id, key.run_id, key.task_id, key.map_index,
                                 state_key))

    def delete_task_state(self, key: TIKey, state_key: str) -> None:
        """Remove the key; a key that is not there is not an error."""
        self._state_delete(task_state_pk(key), state_key)

    def clear_task_state(self, key: TIKey) -> int:
        """Remove every key of the task instance; how many there were."""
        return self._state_clear(task_state_pk(key))

    # -- asset state --------------------------------------------------------------------------------------------
    def get_asset_state(self, asset_name: str, state_key: str) -> StateEntry | None:
        return self._state_get(asset_state_pk(asset_id_of(asset_name)), state_key, None)

    def list_asset_state(self, asset_name: str) -> list[StateEntry]:
        return [self._state_entry(item) for item in self._state_items(asset_state_pk(asset_id_of(asset_name)))]

    def set_asset_state(self, asset_name: str, state_key: str, value: Any, *, now: dt.datetime,
                        writer: TIKey | None = None) -> None:
        """Create or overwrite the key; ``writer`` is the task instance that wrote it (None: the REST API, Airflow's
        writer kind ``api``)."""
        asset_id = asset_id_of(asset_name)
        by = ({"kind": "api"} if writer is None else
              {"kind": "task", "dag_id": writer.dag_id, "run_id": writer.run_id, "task_id": writer.task_id,
               "map_index": writer.map_index})
        self._state_put(asset_state_pk(asset_id), state_key, value, now=now, expires_at=None, asset_id=asset_id,
                  last_updated_by=by, blob=blob_path("state", "asset", asset_id, state_key))

    def delete_asset_state(self, asset_name: str, state_key: str) -> None:
        self._state_delete(asset_state_pk(asset_id_of(asset_name)), state_key)

    def clear_asset_state(self, asset_name: str) -> int:
        return self._state_clear(asset_state_pk(asset_id_of(asset_name)))

    # -- shared -------------------------------------------------------------------------------------------------
    def _state_get(self, pk: str, state_key: str, now: dt.datetime | None) -> StateEntry | None:
        S = self._state_model
        try:
            item = S.get(pk, state_sk(state_key), consistent_read=True)
        except S.DoesNotExist:
            return None
        return None if now is not None and _expired(item, now) else self._state_entry(item)

    def _state_items(self, pk: str) -> Iterator[StateItem]:
        S = self._state_model
        return S.query(pk, S.sk.startswith(KEY_PREFIX), consistent_read=True)

    def _state_put(self, pk: str, state_key: str, value: Any, *, now: dt.datetime, expires_at: dt.datetime | None,
             blob: str, **attributes: Any) -> None:
        if value is None:
            raise ValueError("Cannot set value as None")
        data, s3_key = self.blobs.pack(canonical_json({"v": value}), f"{blob}.json.gz")
        self._state_model(pk, state_sk(state_key), key=state_key, data=data, s3_key=s3_key, updated_at=now,
                    expires_at=expires_at, expires=None if expires_at is None else int(expires_at.timestamp()) + 1,
                    **attributes).save()

    def _state_delete(self, pk: str, state_key: str) -> None:
        S = self._state_model
        try:
            item = S.get(pk, state_sk(state_key), consistent_read=True)
        except S.DoesNotExist:
            return
        self._state_remove(item)

    def _state_clear(self, pk: str) -> int:
        count = 0
        for item in self._state_items(pk):
            self._state_remove(item)
            count += 1
        return count

    def _state_remove(self, item: StateItem) -> None:
        item.delete()  # the item first: a value left in S3 is overwritten by the next write of the key
        if item.s3_key is not None:
            self.blobs.delete(item.s3_key)

    def _state_entry(self, item: StateItem) -> StateEntry:
        return StateEntry(key=item.key, value=self.blobs.unpack(item.data, item.s3_key)["v"],
                          updated_at=item.updated_at, expires_at=item.expires_at,
                          last_updated_by=item.last_updated_by)


def clear_task_states(store: Any, keys: Iterable[TIKey]) -> None:
    """Remove the task state of these task instances: a deleted run's, as Airflow's rows go with their run (a new
    run given the same run id must not find them). Safe to repeat."""
    for key in keys:
        store.clear_task_state(key)


def _expired(item: StateItem, now: dt.datetime) -> bool:
    return item.expires_at is not None and item.expires_at <= now
