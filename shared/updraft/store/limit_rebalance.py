"""A limit's rebalance (``store/limits.py``): every shard's cap planned again for a size, one rebalance at a time
under a lease on the root, every write fenced by that lease."""

from __future__ import annotations

import datetime as dt
import functools
import time

from pynamodb.expressions.condition import Condition, size
from pynamodb.expressions.update import Action

from updraft.store import keys
from updraft.store.limit_markers import LimitMarkers
from updraft.store.limit_reads import raw_holders
from updraft.store.limit_shards import active_shards, effective, entries, plan_caps
from updraft.store.models import LimitItem
from updraft.store.writes import all_of, any_of, conditional, item_absent, item_present, update_quietly

# A rebalance's hold on the root: a crashed one's plan is taken over after this long.
REBALANCE_LEASE = dt.timedelta(seconds=30)


def _now_ms() -> int:
    """Wall time in epoch milliseconds: a lease is compared across processes."""
    return int(time.time() * 1000)


def lease_free(L: type[LimitItem], version: int, now_ms: int) -> Condition:
    """The root is as read and no other rebalance holds it (or its lease ran out): two never mix their plans."""
    return all_of(L.version == version, any_of(L.lease.does_not_exist(), L.lease < now_ms))


def unused_before(L: type[LimitItem], fence: int) -> Condition:
    """No shard here, or one no take can have used (no holders) that no later rebalance stamped."""
    unused: Condition = size(L.holders) == 0  # type: ignore[no-untyped-call]
    return any_of(item_absent(L), all_of(any_of(L.holders.does_not_exist(), unused), stamp_older(L, fence)))


def stamp_older(L: type[LimitItem], fence: int) -> Condition:
    """No rebalance after the one of ``fence`` stamped this shard (its own stamp passes)."""
    return any_of(L.version.does_not_exist(), L.version <= fence)


def stamped(L: type[LimitItem], fence: int) -> Condition:
    return L.version == fence


def cap_is(L: type[LimitItem], cap: int) -> Condition:
    return L.cap == cap


class LimitRebalance(LimitMarkers):
    def _rebalance(self, limit_id: str, limit: int | None = None) -> bool:
        """Give every shard its cap for ``limit`` (None: the root's size) from one read of the limit (``plan_caps``).

        One rebalance at a time: it leases the root (a conditional write on the version read; its version while
        leased is the rebalance's fence), stamps every shard with that fence, and only then reads the limit and
        plans. Every later write of the plan is conditional on the shard's stamp being its own, so a rebalance
        stalled past ``REBALANCE_LEASE`` and taken over writes nothing more, never a piece of its stale plan
        among the next one's. It writes the shards the plan adds, lowers caps before it raises any, and last sets
        the root (its size, shard counts and own cap) and ends the lease, so the shards never offer more than the
        larger of the two plans. Each cap write is also conditional on the cap read. A limit that grows from its
        root alone marks the root's holders (``limit_markers``). False when the limit does not exist or another
        rebalance holds it (the caller reads again).
        """
        fence = self._lease(limit_id)
        if fence is None:
            return False
        self._stamp(limit_id, fence)
        shards = self._read(limit_id)
        taken_over = any(int(shard.version or 0) > fence for shard in shards[1:])
        done = bool(shards) and not taken_over and self._apply_plan(limit_id, shards, fence, limit)
        if not done:
            self._end_lease(limit_id, fence)
        after = self._read(limit_id)  # the shape this process places takes by
        if done and int(shards[0].extent or 1) == 1 and after and int(after[0].extent or 1) > 1:
            self._mark_root_holders(after[0], limit_id)  # grew from its root alone: from now on takes mark
        return done

    def _lease(self, limit_id: str) -> int | None:
        """Lease the root for one rebalance; its version while leased (the fence of the rebalance's writes)."""
        L = self.models.limit
        root = self._get(keys.limit_pk(limit_id), keys.LIMIT_SK)
        if root is None:
            return None
        version, now_ms = int(root.version or 0), _now_ms()
        self._remember(limit_id, root)
        row = L(keys.limit_pk(limit_id), keys.LIMIT_SK)
        lease = [L.version.set(version + 1), L.lease.set(now_ms + int(REBALANCE_LEASE.total_seconds() * 1000))]
        if not conditional(functools.partial(update_quietly, row, lease, lease_free(L, version, now_ms))):
            return None
        return version + 1

    def _stamp(self, limit_id: str, fence: int) -> None:
        """Every shard there is carries this rebalance's fence: an earlier rebalance's writes fail on them from
        here on (one write per shard; rebalances are rare: a limit's growth, a resize). A shard a later rebalance
        stamped keeps its stamp; the read that follows sees it."""
        L = self.models.limit
        shape = self._shape(limit_id)
        for index in range(1, shape.extent if shape is not None else 1):
            row = L(keys.limit_shard_pk(limit_id, index), keys.LIMIT_SK)
            conditional(functools.partial(update_quietly, row, [L.version.set(fence)],
                                          all_of(item_present(L), stamp_older(L, fence))))

    def _end_lease(self, limit_id: str, fence: int) -> None:
        """A rebalance that stopped part way gives the root back at once (not after the lease runs out)."""
        L = self.models.limit
        row = L(keys.limit_pk(limit_id), keys.LIMIT_SK)
        conditional(functools.partial(update_quietly, row, [L.version.set(fence + 1), L.lease.remove()],
                                      L.version == fence))

    def _apply_plan(self, limit_id: str, shards: list[LimitItem], fence: int, limit: int | None) -> bool:
        """Write the plan for ``limit`` made from ``shards`` (read under the lease ``fence``), root last."""
        L = self.models.limit
        root = shards[0]
        size = int(root.limit or 0) if limit is None else limit
        found = [entries(raw_holders(shard)) for shard in shards]
        caps = plan_caps(size, [sum(e.slots for e in f) for f in found], [len(f) for f in found])
        old_caps = [int(shard.cap or 0) for shard in shards] + [0] * (len(caps) - len(shards))
        extent = max(len(shards), len(caps))
        caps += old_caps[len(caps):]
        # Caps lowered first; then the shards the plan adds, or the root counts but nobody wrote (a rebalance that
        # stopped half way), written with their caps: over nothing or over one no take can have used (no holders:
        # what a rebalance that stopped part way, or one taken over, leaves), never over one with holders, and
        # offering nothing before the root counts them (takes go by its shard counts); then caps raised.
        missing = [i for i, shard in enumerate(shards) if shard.cap is None] + list(range(len(shards), len(caps)))
        lowered = [i for i in range(1, extent) if i not in missing and caps[i] < old_caps[i]]
        if not self._set_caps(limit_id, fence, caps, old_caps, lowered):
            return False
        for index in missing:
            new = L(keys.limit_shard_pk(limit_id, index), keys.LIMIT_SK, cap=caps[index],
                    available=effective(caps[index]), holders={}, version=fence)
            if not conditional(functools.partial(new.save, condition=unused_before(L, fence))):
                return False
        raised = [i for i in range(1, extent) if i not in missing and caps[i] > old_caps[i]]
        if not self._set_caps(limit_id, fence, caps, old_caps, raised):
            return False
        row = L(keys.limit_pk(limit_id), keys.LIMIT_SK)
        root_actions: list[Action] = [
            L.limit.set(size), L.extent.set(extent), L.active.set(active_shards(caps)), L.cap.set(caps[0]),
            L.available.set(L.available + (effective(caps[0]) - effective(old_caps[0]))),
            L.version.set(fence + 1), L.lease.remove()]
        return conditional(functools.partial(update_quietly, row, root_actions, L.version == fence))

    def _set_caps(self, limit_id: str, fence: int, caps: list[int], old_caps: list[int], indexes: list[int]) -> bool:
        """The shards ``indexes`` (never the root) to their caps, each conditional on the cap read and on this
        rebalance's stamp; False when a later rebalance stamped a shard (this one's plan is stale)."""
        L = self.models.limit
        for index in indexes:
            delta = effective(caps[index]) - effective(old_caps[index])
            shard_row = L(keys.limit_shard_pk(limit_id, index), keys.LIMIT_SK)
            actions = [L.cap.set(caps[index]), L.available.set(L.available + delta)]
            written = conditional(functools.partial(update_quietly, shard_row, actions,
                                                    all_of(stamped(L, fence), cap_is(L, old_caps[index]))))
            if not written and not self._stamped_with(limit_id, index, fence):
                return False
        return True

    def _stamped_with(self, limit_id: str, index: int, fence: int) -> bool:
        shard = self._get(keys.limit_shard_pk(limit_id, index), keys.LIMIT_SK)
        return shard is not None and int(shard.version or 0) == fence
