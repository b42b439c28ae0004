"""The store's contract for limits and pools (``Store`` extends it): taking and giving back slots, the holders'
marks, and the pools Airflow users see. The implementation is ``store/limits.py`` and the modules it builds on.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import ClassVar, Protocol


class Taken(int):
    """What a take of limit slots did: true (1) when taken, false (0) when refused, and a refusal says why, so a
    claim tells ``HELD`` (the same holder took them first: another scheduler claiming the same try, a race lost)
    from ``FULL`` (no room: stop asking this limit). An int, so it counts and tests as the bool it always was;
    compare with ``is``."""

    YES: ClassVar[Taken]
    FULL: ClassVar[Taken]
    HELD: ClassVar[Taken]
    reason: str

    def __new__(cls, value: int, reason: str) -> Taken:
        taken = super().__new__(cls, value)
        taken.reason = reason
        return taken

    def __repr__(self) -> str:
        return f"Taken.{self.reason}"


Taken.YES, Taken.FULL, Taken.HELD = Taken(1, "YES"), Taken(0, "FULL"), Taken(0, "HELD")


@dataclass
class LimitState:
    limit: int
    available: int
    holders: dict[str, int] = field(default_factory=dict)  # holder -> slots
    taken_at: dict[str, dt.datetime] = field(default_factory=dict)  # holder -> when it took them


@dataclass
class Pool:
    name: str
    slots: int
    description: str = ""
    occupied: int = 0
    # Airflow's include_deferred: a deferred task keeps its slot of this pool while it waits.
    include_deferred: bool = False


class LimitOps(Protocol):
    def take_slots(self, limit_id: str, holder: str, slots: int, *, limit: int, now: dt.datetime,
                   placed: dict[str, int] | None = None, new: bool = False) -> Taken:
        """Add ``holder`` with ``slots`` if that many are available (the limit is created at ``limit`` on first
        use, holding the take). Idempotent: a holder that holds is refused (``HELD``: in the root, or by its mark).
        ``placed``: limit id -> the shard a sharded take put its entry in (``release_slots``' ``shard``). ``new``:
        the limit is expected not to exist yet, so its creation holding the take is tried first (a hint)."""

    def release_slots(self, limit_id: str, holder: str, *, shard: int | None = None, final: bool = False) -> bool:
        """Remove ``holder`` and give its slots back; False if it held none. ``shard``: where its take placed it
        (one write there; else where a take goes first, then a read). ``final``: no take of ``holder`` can follow
        (its try ended for good), so a sharded limit's mark of it is left to expire: the release is one write."""

    def get_limit(self, limit_id: str) -> LimitState | None: ...

    def created_at(self, limit_id: str) -> dt.datetime | None:
        """When a take in this process created the limit (the take's ``now``), while the process remembers it
        (None: not created here, or forgotten): every holder of the limit was taken after it."""

    def resize_limit(self, limit_id: str, limit: int, *, create: bool = True) -> bool:
        """Change a limit's size (a DAG's max_active_tasks changed), keeping its holders; without ``create``,
        False when the limit item does not exist."""

    def get_pool(self, name: str) -> Pool | None: ...

    def list_pools(self) -> list[Pool]: ...

    def pool_slots(self, name: str) -> int | None:
        """A pool's size (None: no such pool) in one read, for screening claims: no holders read."""

    def pool_names(self) -> list[str]:
        """The pools' names as listed (default_pool always), for reconciliation: no pool read."""

    def set_pool(self, name: str, slots: int, description: str = "", include_deferred: bool | None = None
                 ) -> Pool:
        """Create or resize a pool (``include_deferred`` None: unchanged, False for a new pool)."""

    def delete_pool(self, name: str) -> bool:
        """Delete a pool; default_pool cannot be deleted (raises)."""
