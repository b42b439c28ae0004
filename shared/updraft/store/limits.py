"""The limit aggregate: one item per limit (a pool, a run's max_active_tasks, max_active_runs, parallelism)
with its holders, so a take or a release is one conditional write."""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any

from pynamodb.expressions.condition import Condition
from pynamodb.expressions.operand import Path
from pynamodb.expressions.update import Action

from updraft.model.limits import DEFAULT_POOL, DEFAULT_POOL_SLOTS, pool_limit, pool_of
from updraft.store import keys
from updraft.store.api import LimitState, Pool
from updraft.store.attributes import parse_ts, ts
from updraft.store.base import StoreBase
from updraft.store.errors import DefaultPoolCannotBeDeleted, StoreError
from updraft.store.models import LimitItem
from updraft.store.writes import (
    RETRIES,
    acknowledged,
    all_of,
    any_of,
    conditional,
    item_absent,
    item_present,
    update_quietly,
    write_token,
)


# ----------------------------------------------------------------------------------------- named conditions
def room_for(L: type[LimitItem], slots: int) -> Condition:
    """Enough slots are free; a negative limit is unlimited (Airflow's pool slots = -1), ``available`` still
    counts what is held."""
    return any_of(L.available >= slots, L.limit < 0)


def not_holding(L: type[LimitItem], h: str) -> Condition:
    """The holder holds nothing yet: a take is idempotent, never counted twice."""
    holder: Path = L.holders[h]
    return holder.does_not_exist()


def holding(L: type[LimitItem], h: str) -> Condition:
    holder: Path = L.holders[h]
    return holder.exists()


def limit_is(L: type[LimitItem], limit: int) -> Condition:
    """The size is still the one read: two resizes cannot both apply their delta to one old value."""
    return L.limit == limit


def _holders_raw(item: LimitItem) -> dict[str, dict[str, Any]]:
    """By encoded holder. A MapAttribute as read (its as_dict is unannotated in pynamodb), or the plain dict a new
    item was built with."""
    holders = item.holders
    raw: dict[str, dict[str, Any]] = (holders.as_dict() if hasattr(holders, "as_dict")  # type: ignore[no-untyped-call]
                                      else dict(holders or {}))
    return raw


def _holders(item: LimitItem) -> dict[str, dict[str, Any]]:
    return {keys.decode_holder(k): v for k, v in _holders_raw(item).items()}


def _pool_from_item(item: LimitItem) -> Pool:
    holders = _holders(item)
    return Pool(name=item.pool_name, slots=int(item.limit), description=item.description or "",
                occupied=sum(int(v["slots"]) for v in holders.values()),
                include_deferred=bool(item.include_deferred))


class LimitStore(StoreBase):
    def _limit_item(self, limit_id: str) -> LimitItem | None:
        L = self.models.limit
        try:
            return L.get(keys.limit_pk(limit_id), keys.LIMIT_SK, consistent_read=True)
        except L.DoesNotExist:
            return None

    def _new_limit(self, limit_id: str, limit: int, *, pool: str | None = None, description: str = "") -> LimitItem:
        L = self.models.limit
        item = L(keys.limit_pk(limit_id), keys.LIMIT_SK, limit_id=limit_id, limit=limit, available=limit,
                 holders={})
        if pool is not None:
            item.pool_name = pool
            item.description = description
            item.list_pk = keys.POOLS_LIST_PK
            item.list_sk = pool
        return item

    def _ensure_limit(self, limit_id: str, limit: int) -> None:
        """Create the limit item on first use (a conditional put, so racing creators agree), once per process.

        Pools other than default_pool are never created here: a task naming a pool nobody created is not
        schedulable, as in Airflow, so its takes simply fail.
        """
        if limit_id in self._limits_known:
            return
        if limit_id == pool_limit(DEFAULT_POOL):
            item = self._new_limit(limit_id, DEFAULT_POOL_SLOTS, pool=DEFAULT_POOL,
                                   description="Default pool")
        elif pool_of(limit_id) is not None:
            item = None
        else:
            item = self._new_limit(limit_id, limit)
        if item is not None:
            L = self.models.limit
            conditional(lambda: item.save(condition=item_absent(L)))
        with self._lock:
            self._limits_known.add(limit_id)

    def _holds_with(self, limit_id: str, h: str, token: str) -> bool:
        """The holder's entry is the one the take with ``token`` wrote: ours landed, its acknowledgement was lost
        (a holder that took before, say a claim retried by a new invocation, is not ours: it stays refused)."""
        item = self._limit_item(limit_id)
        entry = None if item is None else _holders_raw(item).get(h)
        return entry is not None and entry.get("w") == token

    def take_slots(self, limit_id: str, holder: str, slots: int, *, limit: int, now: dt.datetime) -> bool:
        L = self.models.limit
        h = keys.encode_holder(holder)
        row = L(keys.limit_pk(limit_id), keys.LIMIT_SK)
        token = write_token()
        actions = [L.available.set(L.available - slots),
                   L.holders[h].set({"slots": slots, "at": ts(now), "w": token})]
        condition = all_of(room_for(L, slots), not_holding(L, h))
        landed = functools.partial(self._holds_with, limit_id, h, token)
        if acknowledged(lambda: update_quietly(row, actions, condition), landed):
            return True
        if limit_id in self._limits_known:
            return False
        # Refused by a limit this process has not seen yet: perhaps it does not exist (a run's max_active_tasks
        # item before its first try). Created on that first refusal, not checked before every first take: the
        # common case (the item exists) then costs one request, on the path from one task's end to the next.
        self._ensure_limit(limit_id, limit)
        return acknowledged(lambda: update_quietly(row, actions, condition), landed)

    def release_slots(self, limit_id: str, holder: str) -> bool:
        L = self.models.limit
        h = keys.encode_holder(holder)
        row = L(keys.limit_pk(limit_id), keys.LIMIT_SK)
        # One write: the holder's own entry says how many slots go back.
        actions = [L.available.set(L.available + L.holders[h]["slots"]), L.holders[h].remove()]
        return conditional(lambda: update_quietly(row, actions, holding(L, h)))

    def get_limit(self, limit_id: str) -> LimitState | None:
        item = self._limit_item(limit_id)
        if item is None:
            return None
        holders = _holders(item)
        return LimitState(
            limit=int(item.limit), available=int(item.available),
            holders={h: int(v["slots"]) for h, v in holders.items()},
            taken_at={h: parse_ts(v["at"]) for h, v in holders.items() if v.get("at")},
        )

    def _resize(self, limit_id: str, limit: int, *, create: bool, description: str | None = None,
                include_deferred: bool | None = None) -> LimitItem | None:
        """Set the limit to ``limit``, moving ``available`` by the same delta so holders keep their slots.

        Conditional on the limit read, so two resizes cannot both apply their delta to one old value.
        Returns the item as written, or None (absent and ``create`` is False, or too much contention).
        """
        L = self.models.limit
        for _ in range(RETRIES):
            item = self._limit_item(limit_id)
            if item is None:
                if not create:
                    return None
                pool = pool_of(limit_id)
                new = self._new_limit(limit_id, limit, pool=pool, description=description or "")
                if pool is not None and include_deferred:
                    new.include_deferred = True
                if conditional(functools.partial(new.save, condition=item_absent(L))):
                    return new
                continue
            actions: list[Action] = []
            if int(item.limit) != limit:
                actions += [L.limit.set(limit), L.available.set(L.available + (limit - int(item.limit)))]
            if description is not None and item.description != description:
                actions.append(L.description.set(description))
            if include_deferred is not None and bool(item.include_deferred) != include_deferred:
                actions.append(L.include_deferred.set(include_deferred))
            if not actions:
                return item
            row = L(keys.limit_pk(limit_id), keys.LIMIT_SK)
            if conditional(functools.partial(row.update, actions, limit_is(L, int(item.limit)))):
                return row
        return None

    def resize_limit(self, limit_id: str, limit: int, *, create: bool = True) -> bool:
        return self._resize(limit_id, limit, create=create) is not None

    # ----------------------------------------------------------------------------------------------- pools
    def get_pool(self, name: str) -> Pool | None:
        item = self._limit_item(pool_limit(name))
        if item is None and name == DEFAULT_POOL:
            self._limits_known.discard(pool_limit(name))
            self._ensure_limit(pool_limit(name), DEFAULT_POOL_SLOTS)
            item = self._limit_item(pool_limit(name))
        return None if item is None else _pool_from_item(item)

    def list_pools(self) -> list[Pool]:
        L = self.models.limit
        found = set(self._listed_keys(L.list_index, [keys.POOLS_LIST_PK]))
        found.add((keys.limit_pk(pool_limit(DEFAULT_POOL)), keys.LIMIT_SK))  # the index may lag its creation
        pools = {p.name: p for p in (_pool_from_item(i) for i in self._batch_get(L, sorted(found)))}
        if DEFAULT_POOL not in pools:
            default = self.get_pool(DEFAULT_POOL)
            if default is not None:
                pools[DEFAULT_POOL] = default
        return [pools[n] for n in sorted(pools)]

    def set_pool(self, name: str, slots: int, description: str = "", include_deferred: bool | None = None
                 ) -> Pool:
        if slots < -1:
            raise ValueError("pool slots must be >= 0, or -1 for unlimited")
        item = self._resize(pool_limit(name), slots, create=True, description=description,
                            include_deferred=include_deferred)
        if item is None:
            raise StoreError(f"pool {name}: too much contention to resize it")
        with self._lock:
            self._limits_known.add(pool_limit(name))
        return self.get_pool(name) or _pool_from_item(item)

    def delete_pool(self, name: str) -> bool:
        if name == DEFAULT_POOL:
            raise DefaultPoolCannotBeDeleted()
        L = self.models.limit
        row = L(keys.limit_pk(pool_limit(name)), keys.LIMIT_SK)
        deleted = conditional(lambda: row.delete(item_present(L)))
        with self._lock:
            self._limits_known.discard(pool_limit(name))
        return deleted
