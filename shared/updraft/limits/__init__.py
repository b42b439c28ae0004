"""Limits and claims: counters per limit, a ticket per holder, one transaction per claim and per release.

The protocol (invariants, items, which write enforces which) is ``PROTOCOL.md`` beside this file. Callers use
only this face: ``acquire`` claims holders with their limits (``Frees``: where a claimer saw room in their
shards), ``release`` gives a holder's slots back with its own write, ``hand_over`` moves them to the next
holder without a counter write, ``resize`` / ``ensure`` / ``rebalance`` change a limit's shape, ``room`` and
``size`` read it. The storage is a ``Table`` (an injected DynamoDB client and the table's name); a holder's
write is the store's (``TaskInstanceStore.transition_item``).
"""

from updraft.limits.acquire import Acquired, Claim, Frees, Full, HolderWrite, Lost, Need, acquire
from updraft.limits.hand_over import Handed, NotHeld, fits, hand_over, over_share, shard_ids
from updraft.limits.release import release
from updraft.limits.shape import ensure, held, rebalance, resize, room, size
from updraft.limits.table import Backoff, Contended, Table
from updraft.limits.ticket import Hold, Ticket

__all__ = ["Acquired", "Backoff", "Claim", "Contended", "Frees", "Full", "Handed", "Hold", "HolderWrite", "Lost",
           "Need", "NotHeld", "Table", "Ticket", "acquire", "ensure", "fits", "hand_over", "held", "over_share",
           "rebalance", "release", "resize", "room", "shard_ids", "size"]
