"""Pools: a pool is a record (name, slots, description, include_deferred, its entry in the pools list) in the
partition of its limit ``pool:<name>``. The record says the pool exists and its size; the slots held of it are
the limit's counters and the holders' tickets (``updraft.limits``), which a claim sizes to ``slots`` as read
here. default_pool exists from its first read, at ``DEFAULT_POOL_SLOTS``."""

from __future__ import annotations

import functools

from updraft.model.limits import DEFAULT_POOL, DEFAULT_POOL_SLOTS, pool_limit
from updraft.store import keys
from updraft.store.api import Pool
from updraft.store.base import StoreBase
from updraft.store.errors import DefaultPoolCannotBeDeleted
from updraft.store.models import LimitItem
from updraft.store.writes import conditional, item_absent, item_present


class PoolStore(StoreBase):
    def _record(self, name: str) -> LimitItem | None:
        """The pool's record, strongly read; a missing default_pool's is created (only when absent) first."""
        L = self.models.limit
        try:
            return L.get(keys.limit_pk(pool_limit(name)), keys.POOL_SK, consistent_read=True)
        except L.DoesNotExist:
            if name != DEFAULT_POOL:
                return None
        record = self._new_record(DEFAULT_POOL, DEFAULT_POOL_SLOTS, "Default pool", False)
        if conditional(functools.partial(record.save, condition=item_absent(L))):
            return record
        return L.get(keys.limit_pk(pool_limit(name)), keys.POOL_SK, consistent_read=True)  # created meanwhile

    def _new_record(self, name: str, slots: int, description: str, include_deferred: bool) -> LimitItem:
        return self.models.limit(keys.limit_pk(pool_limit(name)), keys.POOL_SK, pool_name=name, limit=slots,
                                 list_pk=keys.POOLS_LIST_PK, list_sk=name, description=description,
                                 include_deferred=include_deferred)

    @staticmethod
    def _pool(record: LimitItem) -> Pool:
        return Pool(name=record.pool_name or "", slots=int(record.limit if record.limit is not None else 0),
                    description=record.description or "", include_deferred=bool(record.include_deferred))

    def get_pool(self, name: str) -> Pool | None:
        record = self._record(name)
        return None if record is None else self._pool(record)

    def pool_slots(self, name: str) -> int | None:
        """A pool's size, None when there is no such pool: one read of its record."""
        pool = self.get_pool(name)
        return None if pool is None else pool.slots

    def list_pools(self) -> list[Pool]:
        L = self.models.limit
        found = set(self._listed_keys(L.list_index, [keys.POOLS_LIST_PK]))
        pools = {p.name: p for p in map(self._pool, self._batch_get(L, sorted(found)))}
        if DEFAULT_POOL not in pools:  # the index may lag its creation, or it was never read yet
            default = self.get_pool(DEFAULT_POOL)
            if default is not None:
                pools[DEFAULT_POOL] = default
        return [pools[n] for n in sorted(pools)]

    def set_pool(self, name: str, slots: int, description: str = "", include_deferred: bool | None = None
                 ) -> Pool:
        if slots < -1:
            raise ValueError("pool slots must be >= 0, or -1 for unlimited")
        current = self._record(name)
        kept = bool(current.include_deferred) if current is not None else False
        self._new_record(name, slots, description, kept if include_deferred is None else include_deferred).save()
        return Pool(name, slots, description, kept if include_deferred is None else include_deferred)

    def delete_pool(self, name: str) -> bool:
        """Delete the pool's record (the pool is gone for every reader and claim). Its counters stay: a try
        still holding a slot of it gives the slot back to them, and a pool created again under the name is sized
        to its new slots by the first claim the old size refuses."""
        if name == DEFAULT_POOL:
            raise DefaultPoolCannotBeDeleted()
        L = self.models.limit
        record = L(keys.limit_pk(pool_limit(name)), keys.POOL_SK)
        return conditional(lambda: record.delete(item_present(L)))
