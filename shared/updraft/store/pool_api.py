"""The store's contract for pools (``Store`` extends it): the pools Airflow users see, each a record of its size
and settings. What a pool's slots are held by is its limit's counters and the holders' tickets
(``updraft.limits``); the implementation is ``store/pools.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass
class Pool:
    name: str
    slots: int  # -1: unlimited
    description: str = ""
    # Airflow's include_deferred: a deferred task keeps its slot of this pool while it waits.
    include_deferred: bool = False


class PoolOps(Protocol):
    def get_pool(self, name: str) -> Pool | None:
        """The pool (default_pool always: created at its default size on first read)."""

    def list_pools(self) -> list[Pool]:
        """Every pool, by name (default_pool always)."""

    def pool_slots(self, name: str) -> int | None:
        """A pool's size (None: no such pool) in one read, for screening claims."""

    def set_pool(self, name: str, slots: int, description: str = "", include_deferred: bool | None = None
                 ) -> Pool:
        """Create or resize a pool (``include_deferred`` None: unchanged, False for a new pool)."""

    def delete_pool(self, name: str) -> bool:
        """Delete a pool; default_pool cannot be deleted (raises)."""
