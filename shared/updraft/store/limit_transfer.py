"""A slot transfer: the slots an ended try holds in a limit go to the next try in one conditional write (issue 19).

A worker's mini scheduler claims the ended try's downstream while that try still holds its slots (so a chain's
next task never waits for a release to free a slot), and released them afterwards: per limit a take and a release,
two writes of the same item. Where the ended try's entry sits on the limit's root and the root is the limit's
only active shard, one UpdateItem does both: it removes the donor's entry, adds the new holder's and moves
``available`` by the difference in slots, conditional on

- the donor's entry being there, on the root, with exactly the slots the caller expects (no piece of a take
  spread over shards: a piece's key differs);
- the new holder holding nothing there (a claim retried by another invocation is refused, never counted twice);
- room for the difference (a new try needing more slots than the donor gave back), or an unlimited limit;
- the root being the limit's only shard (``root_alone``, as a take of a limit that is its root alone): then
  neither holder can sit anywhere else.

So the limit is never over its size at any moment (the write is atomic on one item, and is a release followed by
a take that the same conditions would have allowed), and a lost acknowledgement is told by the new entry's write
token, as for a take. A limit spread over shards (the donor may sit in any of them) and a holder whose name lives
in a name item of its own are not transferred: False, and the caller takes and releases as before.
"""

from __future__ import annotations

import datetime as dt
import functools

from pynamodb.expressions.condition import Condition

from updraft.store import keys
from updraft.store.limit_reads import raw_holders
from updraft.store.limit_shards import entry_value, inline_name
from updraft.store.limits import LimitStore, not_holding, room_for, root_alone
from updraft.store.models import LimitItem
from updraft.store.writes import acknowledged, all_of, update_quietly, write_token


def holds_exactly(L: type[LimitItem], entry_key: str, slots: int) -> Condition:
    """The holder's whole entry is in this shard with ``slots`` slots."""
    held: Condition = L.holders[entry_key][0] == slots
    return held


class LimitTransfer(LimitStore):
    def transfer_slots(self, limit_id: str, donor: str, donor_slots: int, holder: str, slots: int, *,
                       now: dt.datetime) -> bool:
        shape = self._shape(limit_id)
        if (shape is not None and shape.extent > 1) or not (inline_name(donor) and inline_name(holder)):
            return False  # no single write finds the donor (or both names): the caller takes and releases
        L = self.models.limit
        donor_key, key = keys.holder_key(donor), keys.holder_key(holder)
        value = entry_value(slots, now, write_token(), holder)
        difference = donor_slots - slots
        actions = [L.holders[donor_key].remove(), L.holders[key].set(value)]
        condition = all_of(holds_exactly(L, donor_key, donor_slots), not_holding(L, key), root_alone(L))
        if difference:
            actions.append(L.available.set(L.available + difference))
        if difference < 0:
            condition = all_of(condition, room_for(L, -difference))
        row = L(keys.limit_pk(limit_id), keys.LIMIT_SK)
        landed = functools.partial(self._transferred, limit_id, key, str(value[2]))
        return acknowledged(lambda: update_quietly(row, actions, condition), landed)

    def _transferred(self, limit_id: str, key: str, token: str) -> bool:
        """The new holder's entry on the root is the one the transfer with ``token`` wrote: it landed, its
        acknowledgement was lost (a holder that held before, a claim retried elsewhere, stays refused)."""
        root = self._get(keys.limit_pk(limit_id), keys.LIMIT_SK)
        value = None if root is None else raw_holders(root).get(key)
        return value is not None and str(value[2]) == token
