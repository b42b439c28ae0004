"""The limit aggregate: a limit (a pool, a run's max_active_tasks, max_active_runs, parallelism) spread over shard
items of at most 1 KB each (layout in ``limit_shards``), so every write is one write unit on one small item and
a busy limit spreads over as many partitions as it has shards.

The root item is also shard 0 and says the size, how many shards takes use (``active``) and how many exist
(``extent``). A take of a limit that is its root alone is one conditional write on the root (conditional on
``extent = 1``, so the holder can be nowhere else). A take of a sharded limit first marks the holder
(``limit_markers``: a conditional write that fails when the holder holds, wherever), then writes the first shard
with room in the holder's own order (from a hash of the holder), trying its home and the next two; only when those
refuse does it read every shard (a root GetItem and a BatchGetItem per 100 shards) to find room, in pieces over
several shards when no single one has it, or to say the limit is full. Every refused write returns the item as it
was (``ReturnValuesOnConditionCheckFailure``, no read units), which is how a take learns a limit's shape and tells
"full" from "held". Each shard write is conditional on that shard's room and on the holder not holding in it, and
the shards' caps never offer more than the limit has free (``plan_caps``), so the limit is never over its size. A
release tries the shards a take tries first, then reads, then removes the mark (a try's last release, once
it ended for good, leaves it to expire: ``limit_markers``). A new limit is its root alone; the first take that
finds it full while the limit has room spreads the rest over new shards, and a resize plans every cap again, both
under a lease on the root (``limit_rebalance``; reads in ``limit_reads``). Pools add a record of their own
(``store/pools.py``).
"""

from __future__ import annotations

import datetime as dt
import time
from collections import defaultdict
from typing import Any

from pynamodb.expressions.condition import Condition, size
from pynamodb.expressions.operand import Path

from updraft.model.limits import DEFAULT_POOL, DEFAULT_POOL_SLOTS, pool_limit, pool_of
from updraft.store import keys
from updraft.store.limit_api import Taken
from updraft.store.limit_reads import raw_holders
from updraft.store.limit_rebalance import REBALANCE_LEASE, LimitRebalance
from updraft.store.limit_shards import (
    PIECE,
    SHARD_ENTRIES,
    ShardView,
    effective,
    entries,
    entry_value,
    inline_name,
    plan_take,
    probe_order,
    root_admits,
    root_cap,
)
from updraft.store.models import LimitItem
from updraft.store.writes import (
    RETRIES,
    all_of,
    any_of,
    item_absent,
    write_reporting,
    write_token,
)

FAST_PROBES = 3  # shards a take or release tries (its home, then the next) before it reads the limit
# ----------------------------------------------------------------------------------------- named conditions
def room_for(L: type[LimitItem], slots: int) -> Condition:
    """Enough slots are free in this shard; an unlimited shard (cap -1) still counts what is held."""
    return any_of(L.available >= slots, L.cap < 0)


def not_holding(L: type[LimitItem], key: str) -> Condition:
    """The holder holds nothing in this shard yet (neither whole nor a piece): a take is never counted twice."""
    return all_of(L.holders[key].does_not_exist(), L.holders[key + PIECE].does_not_exist())


def entry_room(L: type[LimitItem], count: int = 1) -> Condition:
    """The shard has room for ``count`` more entries: what keeps it under 1 KB, whatever the slots."""
    entry_count: Condition = size(L.holders) <= SHARD_ENTRIES - count  # type: ignore[no-untyped-call]
    return entry_count


def root_alone(L: type[LimitItem]) -> Condition:
    """The root is the limit's only shard (once a limit has others, its holders may sit in any of them, and its
    takes go through their markers)."""
    return L.extent == 1


def _entry_token(shard: LimitItem, entry_key: str) -> str:
    """The write token of ``entry_key``'s entry in ``shard`` ("" when it has none): which write put it there."""
    return str(raw_holders(shard).get(entry_key, [0, 0, ""])[2])


def holding(L: type[LimitItem], entry_key: str) -> Condition:
    entry: Path = L.holders[entry_key]
    return entry.exists()


class LimitStore(LimitRebalance):
    # --------------------------------------------------------------------------------------- creation
    def _create(self, limit_id: str, limit: int, first: tuple[str, list[Any]] | None = None) -> LimitItem | None:
        """Create the limit at ``limit`` slots as its root alone, offering up to one shard's share (a conditional
        put, so racing creators agree): one write, as before sharding, and most limits (a run's max_active_tasks,
        a small pool) never need more. The first take that finds the root full while the limit has room spreads
        the rest over new shards (``_rebalance``). ``first``: the entry (holder key, value) of the take that found
        the limit missing, which the root is created holding when its cap has room for it, so the creation is the
        take (one write, not a put and the take again). The root this call created (None: it exists already)."""
        L = self.models.limit
        cap = root_cap(limit)
        holders = {first[0]: first[1]} if first is not None and root_admits(cap, int(first[1][0])) else {}
        root = L(keys.limit_pk(limit_id), keys.LIMIT_SK, limit=limit, active=1, extent=1, version=0, cap=cap,
                 available=effective(cap) - sum(int(value[0]) for value in holders.values()), holders=holders)
        written = write_reporting(root, condition=item_absent(L))
        # A resent put refused by our own landed one (its acknowledgement was lost) created it all the same.
        ours = written.resent and first is not None and written.item is not None \
            and _entry_token(L.from_raw_data(written.item), first[0]) == str(first[1][2])
        if not (written.landed or ours):
            return None
        self._remember(limit_id, root)
        return root

    def _ensure_limit(self, limit_id: str, limit: int, first: tuple[str, list[Any]] | None = None
                      ) -> LimitItem | None:
        """Create the limit on first use, once per process (``first``: as for ``_create``); the root this call
        created (None: it did not create one).

        Pools other than default_pool are never created here: a task naming a pool nobody created is not
        schedulable, as in Airflow, so its takes simply fail.
        """
        if limit_id in self._limits_known:
            return None
        created = None
        if limit_id == pool_limit(DEFAULT_POOL):
            created = self._create(limit_id, DEFAULT_POOL_SLOTS, first)
        elif pool_of(limit_id) is None:
            created = self._create(limit_id, limit, first)
        with self._lock:
            self._limits_known.add(limit_id)
        return created

    def _create_taking(self, limit_id: str, limit: int, key: str, value: list[Any],
                       now: dt.datetime) -> LimitItem | None:
        """``_ensure_limit`` with the take's entry (the root holds it when it has room), remembered as created
        ``now`` (reconciliation leaves it alone within the grace); the root this call created, or None."""
        made = self._ensure_limit(limit_id, limit, (key, value))
        if made is not None:
            self._limits_created.put(limit_id, now)
        return made

    def created_at(self, limit_id: str) -> dt.datetime | None:
        created: dt.datetime | None = self._limits_created.get(limit_id)
        return created

    # ------------------------------------------------------------------------------------- take, release
    def _take_at(self, limit_id: str, index: int, entry_key: str, value: list[Any], *,
                 alone: bool = False) -> tuple[bool, LimitItem | None]:
        """One conditional write of one shard: room for the slots, room for an entry, the holder not in it. With
        ``alone`` (a take on a root with no marker) also that the root is the limit's only shard: then the holder
        can be nowhere else, so "not in it" means "not holding". Whether it landed, and the shard as it was when
        refused (None: no such shard), which says why at no read cost."""
        return self._take_entries_at(limit_id, index, {entry_key: value}, alone=alone)

    def _take_entries_at(self, limit_id: str, index: int, taken: dict[str, list[Any]], *,
                         alone: bool = False) -> tuple[bool, LimitItem | None]:
        """``_take_at``'s write for the entries ``taken``: room for all their slots and entries, none of their
        holders in the shard; all land or none."""
        L = self.models.limit
        slots = sum(int(value[0]) for value in taken.values())
        row = L(keys.limit_shard_pk(limit_id, index), keys.LIMIT_SK)
        actions = [L.available.set(L.available - slots), *(L.holders[k].set(v) for k, v in taken.items())]
        condition = all_of(room_for(L, slots), entry_room(L, len(taken)),
                           *(not_holding(L, entry_key.removesuffix(PIECE)) for entry_key in taken))
        if alone:
            condition = all_of(condition, root_alone(L))
        written = write_reporting(row, actions=actions, condition=condition)
        shard = L.from_raw_data(written.item) if written.item else None
        if written.landed:
            return True, shard
        # A resent request refused by our own landed write (its acknowledgement was lost): the entries are ours.
        mine = written.resent and shard is not None \
            and all(_entry_token(shard, k) == str(v[2]) for k, v in taken.items())
        return mine, shard

    def _release_at(self, limit_id: str, index: int, entry_key: str) -> tuple[bool, LimitItem | None]:
        """One write: the entry itself says how many slots go back. Whether it released, and the shard after the
        write or as refused (None: no such shard)."""
        L = self.models.limit
        row = L(keys.limit_shard_pk(limit_id, index), keys.LIMIT_SK)
        actions = [L.available.set(L.available + L.holders[entry_key][0]), L.holders[entry_key].remove()]
        written = write_reporting(row, actions=actions, condition=holding(L, entry_key))
        return written.landed, L.from_raw_data(written.item) if written.item else None

    def take_slots(self, limit_id: str, holder: str, slots: int, *, limit: int, now: dt.datetime,
                   placed: dict[str, int] | None = None, new: bool = False) -> Taken:
        key = keys.holder_key(holder)
        value = entry_value(slots, now, write_token(), holder)
        if not inline_name(holder):  # the name first: an entry is never there without a way to its name
            self.models.limit(keys.holder_name_pk(limit_id, key), keys.HOLDER_NAME_SK, holder=holder).save()
        shape = self._shape(limit_id)
        if shape is None or shape.extent == 1:
            new = new and shape is None and limit_id not in self._limits_known
            taken = self._take_root_alone(limit_id, key, value, limit, now=now, new=new)
            if taken is not None:
                return taken
        if not self._mark(limit_id, key, str(value[2])):
            return Taken.HELD
        taken, index = self._take_marked(limit_id, holder, key, value)
        if taken is not Taken.YES:
            self._unmark(limit_id, key, str(value[2]))
        elif placed is not None and index is not None:
            placed[limit_id] = index
        return taken

    def _take_root_alone(self, limit_id: str, key: str, value: list[Any], limit: int, *, now: dt.datetime,
                         new: bool = False) -> Taken | None:
        """A take of a limit that is (or was, when this process last saw it) its root alone: one conditional write
        on the root. None: the limit is spread over shards (it grew meanwhile, or this one's refusal grew it), so
        the take goes through its marker. ``new``: the caller expects the limit not to exist yet (a run's own
        limits at the claims of the pass that started it): the creation holding the entry is tried first, one
        write in all (a wrong guess costs that write, refused, before the take)."""
        created = new
        if new:
            made = self._create_taking(limit_id, limit, key, value, now)
            if made is not None and key in raw_holders(made):
                return Taken.YES
        for _ in range(RETRIES):
            landed, root = self._take_at(limit_id, 0, key, value, alone=True)
            if landed:
                return Taken.YES
            if root is None:
                # Refused by a limit that does not exist: created here on its first take (a run's
                # max_active_tasks), not checked before every first take, so the common case costs one request,
                # and created holding this take's entry, so a first take costs two.
                made = None if created else self._create_taking(limit_id, limit, key, value, now)
                if made is None:
                    return Taken.FULL  # a pool nobody created: not schedulable, as in Airflow
                if key in raw_holders(made):
                    return Taken.YES
                created = True
                continue
            shape = self._remember(limit_id, root)
            if shape.extent > 1:
                return None
            found = entries(raw_holders(root))
            if any(e.key == key for e in found):
                return Taken.HELD
            held = sum(e.slots for e in found)
            if shape.limit >= 0 and shape.limit - held < int(value[0]):
                return Taken.FULL
            # The limit has room its root does not offer (its first growth; a shrink parked it; every entry is
            # used; an unlimited limit needs a shard): planned again, then taken again.
            self._rebalance(limit_id)
        return Taken.FULL

    def _take_marked(self, limit_id: str, holder: str, key: str, value: list[Any]) -> tuple[Taken, int | None]:
        """A marked holder's take of a sharded limit: up to ``FAST_PROBES`` shards, each one conditional write
        and no read (its home shard, then where this process last saw room, else the next ones); only when they
        all refuse, a read of every shard finds room (in pieces for a take bigger than a shard), or says the
        limit is full. With the shard its whole entry went to (None: in pieces, or refused)."""
        shape = self._shape(limit_id)
        slots = int(value[0])
        if shape is not None and slots > 0:
            count = shape.active if shape.limit >= 0 else shape.extent
            for index in self._probes(limit_id, probe_order(keys.holder_shard(holder, count), count), slots):
                landed, shard = self._take_at(limit_id, index, key, value)
                self._see_room(limit_id, index, shard)
                if landed:
                    return Taken.YES, index
                if shard is None:
                    break  # a shard the root counts but not yet written (a growth under way): read
        return self._take_spread(limit_id, holder, key, value)

    def _probes(self, limit_id: str, order: list[int], slots: int) -> list[int]:
        """The shards a take tries before it reads: its home unless it was seen full, then the shards seen with
        the most room (none when every shard was seen full: the take reads), else onward from its home."""
        rooms = self._rooms(limit_id)
        if rooms is None:
            return order[:FAST_PROBES]
        home = [order[0]] if rooms.get(order[0], 0) >= slots else []
        seen = sorted((i for i, free in rooms.items() if free >= slots and i not in home), key=lambda i: -rooms[i])
        return (home + seen)[:FAST_PROBES]

    def _take_spread(self, limit_id: str, holder: str, key: str, value: list[Any]) -> tuple[Taken, int | None]:
        """Read every shard, then take where there is room: in one shard, or in pieces over several (each piece
        a conditional write; a refused piece gives back the ones taken and the take plans again)."""
        for _ in range(RETRIES):
            shards = self._read(limit_id)
            if not shards:
                return Taken.FULL, None
            self._see_rooms(limit_id, shards)
            found = [entries(raw_holders(shard)) for shard in shards]
            if any(e.key == key for shard_entries in found for e in shard_entries):
                return Taken.HELD, None  # taken before its marker (while the limit was its root alone)
            views = [ShardView(i, int(s.cap if s.cap is not None else 0), int(s.available or 0), len(found[i]))
                     for i, s in enumerate(shards)]
            shape = self._remember(limit_id, shards[0])
            order = probe_order(keys.holder_shard(holder, shape.active), shape.active) if shape.limit >= 0 \
                else probe_order(keys.holder_shard(holder, shape.extent), shape.extent)
            plan = plan_take(views, int(value[0]), order)
            if plan is None:
                held = sum(e.slots for shard_entries in found for e in shard_entries)
                if shape.limit >= 0 and shape.limit - held < int(value[0]):
                    return Taken.FULL, None
                # The limit has room its shards do not offer (a shrink parked them; every shard has its entries;
                # an unlimited limit needs one more shard): the caps are planned again, then the take.
                self._rebalance(limit_id)
                continue
            entry_keys = [key] if len(plan) == 1 else [key + PIECE] * len(plan)
            taken: list[tuple[int, str]] = []
            for (index, piece), entry_key in zip(plan, entry_keys, strict=True):
                if not self._take_at(limit_id, index, entry_key, [piece, *value[1:]])[0]:
                    break
                taken.append((index, entry_key))
            if len(taken) == len(plan):
                return Taken.YES, plan[0][0] if len(plan) == 1 else None
            for index, entry_key in taken:
                self._release_at(limit_id, index, entry_key)
        return Taken.FULL, None

    def release_slots(self, limit_id: str, holder: str, *, shard: int | None = None, final: bool = False) -> bool:
        key = keys.holder_key(holder)
        shape = self._shape(limit_id)
        released = False
        if shard is not None:  # where its take placed it (``placed``): one write
            released, found = self._release_at(limit_id, shard, key)
            if shard == 0 and found is not None:
                shape = self._remember(limit_id, found)
        if not released and shape is None:  # the root first: a limit's root alone holds all (else it says the shape)
            released, root = self._release_at(limit_id, 0, key)
            shape = self._remember(limit_id, root) if root is not None else None
        if not released and shape is not None:
            # Where a take goes first: its home shard, then onward (a take skips only shards known full).
            count = shape.active if shape.limit >= 0 else shape.extent
            for index in probe_order(keys.holder_shard(holder, count), count)[:FAST_PROBES]:
                released, found = self._release_at(limit_id, index, key)
                if index == 0 and found is not None:
                    # The root as this release left it: a limit this process last saw as its root alone may
                    # have grown since, and the growth marked the root's holders (this one's marker goes too).
                    shape = self._remember(limit_id, found)
                if released:
                    break
        if not released:  # placed further on, in pieces, or not held: read where
            released = self._release_one_take(limit_id, key)
            shape = self._shape(limit_id)
        if not final and (shape is None or shape.extent > 1):
            # After the slots: a marker never goes before its holder's entry. A final release leaves it (its
            # holder takes no more; ``limit_markers``: a dead marker).
            self._unmark(limit_id, key)
        if released and not inline_name(holder):
            self.models.limit(keys.holder_name_pk(limit_id, key), keys.HOLDER_NAME_SK).delete()
        return released

    def _release_one_take(self, limit_id: str, key: str) -> bool:
        """Give back one take of the holder, found by a read: its whole entry or all its pieces (one take's pieces
        share its write token). One take per release, as on the fast path: two takes of one holder (two schedulers
        claiming the same try; each gives its own back) are two releases, so a release never frees a live one."""
        placed: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for index, shard in enumerate(self._read(limit_id)):
            for entry_key, value in raw_holders(shard).items():
                if entry_key.removesuffix(PIECE) == key:
                    placed[str(value[2])].append((index, entry_key))
        if not placed:
            return False
        one = next(iter(placed.values()))
        return any([self._release_at(limit_id, index, entry_key)[0] for index, entry_key in one])

    # ----------------------------------------------------------------------------------------------- resize
    def _resize(self, limit_id: str, limit: int, *, create: bool) -> bool:
        """Set the limit to ``limit`` slots, holders keeping theirs (a shrink below them admits nobody until they
        fall below it). Waits out another rebalance (a resize is an operator's or a deploy's act, never on a task's
        path), up to ``REBALANCE_LEASE``."""
        deadline = time.monotonic() + REBALANCE_LEASE.total_seconds()
        pause = 0.01
        while time.monotonic() < deadline:
            root = self._get(keys.limit_pk(limit_id), keys.LIMIT_SK)
            if root is None:
                if not create:
                    return False
                if self._create(limit_id, limit) is not None:
                    return True
                continue
            if int(root.limit or 0) == limit or self._rebalance(limit_id, limit):
                return True
            time.sleep(pause)
            pause = min(pause * 2, 0.5)
        return False

    def resize_limit(self, limit_id: str, limit: int, *, create: bool = True) -> bool:
        return self._resize(limit_id, limit, create=create)
