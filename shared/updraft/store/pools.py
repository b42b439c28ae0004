"""Pools: a pool is the limit ``pool:<name>`` (``store/limits.py``) plus a record of its own beside the limit's
root (name, description, include_deferred, its entry in the pools list), written only by ``set_pool``, so the
limit's items stay small and a description of any length never rides on a take."""

from __future__ import annotations

import functools
from typing import Any

from updraft.model.limits import DEFAULT_POOL, DEFAULT_POOL_SLOTS, pool_limit
from updraft.store import keys
from updraft.store.errors import DefaultPoolCannotBeDeleted, StoreError
from updraft.store.limit_api import Pool
from updraft.store.limits import LimitStore
from updraft.store.models import LimitItem
from updraft.store.writes import conditional, item_absent, item_present


class PoolStore(LimitStore):
    def _ensure_limit(self, limit_id: str, limit: int, first: tuple[str, list[Any]] | None = None
                      ) -> LimitItem | None:
        """default_pool exists from first use: its limit and its record (each written only when absent)."""
        unknown = limit_id not in self._limits_known
        created = super()._ensure_limit(limit_id, limit, first)
        if unknown and limit_id == pool_limit(DEFAULT_POOL):
            self._put_pool_record(DEFAULT_POOL, "Default pool", None, only_if_absent=True)
        return created

    def _put_pool_record(self, name: str, description: str | None, include_deferred: bool | None, *,
                         only_if_absent: bool = False) -> None:
        """The pool's record: its name in the pools list, description and include_deferred (None: unchanged)."""
        L = self.models.limit
        pk = keys.limit_pk(pool_limit(name))
        current = None if only_if_absent else self._get(pk, keys.POOL_SK)
        record = L(pk, keys.POOL_SK, pool_name=name, list_pk=keys.POOLS_LIST_PK, list_sk=name,
                   description=description if description is not None else (current.description if current else ""),
                   include_deferred=bool(include_deferred if include_deferred is not None
                                         else (current.include_deferred if current else False)))
        if only_if_absent:
            conditional(functools.partial(record.save, condition=item_absent(L)))
        else:
            record.save()

    def _pool(self, record: LimitItem) -> Pool | None:
        state = self.get_limit(pool_limit(record.pool_name or ""))
        if state is None:
            return None
        return Pool(name=record.pool_name or "", slots=state.limit, description=record.description or "",
                    occupied=sum(state.holders.values()), include_deferred=bool(record.include_deferred))

    def get_pool(self, name: str) -> Pool | None:
        record = self._get(keys.limit_pk(pool_limit(name)), keys.POOL_SK)
        if record is None and name == DEFAULT_POOL:
            self._limits_known.discard(pool_limit(name))
            self._ensure_limit(pool_limit(name), DEFAULT_POOL_SLOTS)
            record = self._get(keys.limit_pk(pool_limit(name)), keys.POOL_SK)
        return None if record is None else self._pool(record)

    def pool_slots(self, name: str) -> int | None:
        """A pool's size, None when there is no such pool: its record (which says it exists) and its root (which
        says its size) in one batch read, whatever the shards, and nothing created (a missing default_pool is
        created by its first take)."""
        L = self.models.limit
        pk = keys.limit_pk(pool_limit(name))
        found = {item.sk: item for item in self._batch_get(L, [(pk, keys.POOL_SK), (pk, keys.LIMIT_SK)])}
        root = found.get(keys.LIMIT_SK)
        if keys.POOL_SK not in found or root is None:
            return None
        return self._remember(pool_limit(name), root).limit

    def pool_names(self) -> list[str]:
        """The pools' names from the pools list (an index: a pool created a moment ago may be missing, and
        default_pool is always named), without reading any pool."""
        L = self.models.limit
        listed = {item.list_sk or "" for item in L.list_index.query(keys.POOLS_LIST_PK)}
        return sorted((listed - {""}) | {DEFAULT_POOL})

    def list_pools(self) -> list[Pool]:
        L = self.models.limit
        found = set(self._listed_keys(L.list_index, [keys.POOLS_LIST_PK]))
        found.add((keys.limit_pk(pool_limit(DEFAULT_POOL)), keys.POOL_SK))  # the index may lag its creation
        pools = {p.name: p for p in (self._pool(r) for r in self._batch_get(L, sorted(found))) if p is not None}
        if DEFAULT_POOL not in pools:
            default = self.get_pool(DEFAULT_POOL)
            if default is not None:
                pools[DEFAULT_POOL] = default
        return [pools[n] for n in sorted(pools)]

    def set_pool(self, name: str, slots: int, description: str = "", include_deferred: bool | None = None
                 ) -> Pool:
        if slots < -1:
            raise ValueError("pool slots must be >= 0, or -1 for unlimited")
        if not self._resize(pool_limit(name), slots, create=True):
            raise StoreError(f"pool {name}: too much contention to resize it")
        self._put_pool_record(name, description, include_deferred)
        with self._lock:
            self._limits_known.add(pool_limit(name))
        pool = self.get_pool(name)
        if pool is None:
            raise StoreError(f"pool {name}: deleted while it was being set")
        return pool

    def delete_pool(self, name: str) -> bool:
        """The record first (the pool is gone for every reader), then the limit's shards, its root last."""
        if name == DEFAULT_POOL:
            raise DefaultPoolCannotBeDeleted()
        L = self.models.limit
        limit_id = pool_limit(name)
        record = L(keys.limit_pk(limit_id), keys.POOL_SK)
        deleted = conditional(lambda: record.delete(item_present(L)))
        shards = self._read(limit_id)
        for index in reversed(range(len(shards))):
            L(keys.limit_shard_pk(limit_id, index), keys.LIMIT_SK).delete()
        with self._lock:
            self._limits_known.discard(limit_id)
            self._limit_shapes.pop(limit_id, None)
        return deleted
