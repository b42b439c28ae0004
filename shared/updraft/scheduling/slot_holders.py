"""Which try holds a limit's entry now: the try the entry names or, when that try handed its slot on
(before tickets, a worker handed the slots of its ended try to the next one), a later try of the same run that
lists the entry in ``TaskInstance.limit_entries``.

Reconciliation and the pools route ask this of an entry. The try the entry names is read first (one GetItem, and
what almost every entry needs); only when it does not hold the entry itself are its run's instances read, once per
run for all the entries asked of one ``EntryHolders``.
"""

from __future__ import annotations

import datetime as dt

from updraft.model.records import TaskInstance, TIKey
from updraft.model.states import KEPT_WHILE_DEFERRED, SLOT_HOLDING_STATES
from updraft.store.api import Store

# A try in one of these may hold a limit slot (a deferred one and its resumption: of a pool with include_deferred).
HOLDING_STATES = SLOT_HOLDING_STATES | KEPT_WHILE_DEFERRED


def lists(ti: TaskInstance, limit_id: str, entry: str) -> bool:
    """Whether the try's record says its slot of ``limit_id`` is ``entry`` (live or ended since)."""
    return limit_id in ti.held_limits and ti.entry(limit_id) == entry


def holds(ti: TaskInstance, limit_id: str, entry: str) -> bool:
    return ti.state in HOLDING_STATES and lists(ti, limit_id, entry)


class EntryHolders:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._named: dict[TIKey, TaskInstance | None] = {}
        self._runs: dict[tuple[str, str], list[TaskInstance]] = {}

    def _read(self, key: TIKey) -> TaskInstance | None:
        if key not in self._named:
            self._named[key] = self.store.get_ti(key)
        return self._named[key]

    def tries(self, limit_id: str, entry: str) -> list[TaskInstance]:
        """The tries whose record lists ``entry`` for ``limit_id`` (none for an entry that names no try)."""
        parsed = TIKey.parse_holder(entry)
        if parsed is None:
            return []
        named = self._read(parsed[0])
        if named is not None and holds(named, limit_id, entry):
            return [named]
        run = (parsed[0].dag_id, parsed[0].run_id)
        if run not in self._runs:
            self._runs[run] = self.store.get_run_tis(*run)
        return [ti for ti in self._runs[run] if lists(ti, limit_id, entry)]

    def holder(self, limit_id: str, entry: str) -> TaskInstance | None:
        """The live try holding ``entry``, if any: the try it names while that try is live (its record's list of
        limits not asked: an entry written by hand counts too), else the one it was handed on to."""
        parsed = TIKey.parse_holder(entry)
        named = self._read(parsed[0]) if parsed is not None else None
        if named is not None and named.state in HOLDING_STATES and named.entry(limit_id) == entry:
            return named
        return next((ti for ti in self.tries(limit_id, entry) if holds(ti, limit_id, entry)), None)

    def in_use(self, limit_id: str, entry: str, *, now: dt.datetime, grace: dt.timedelta) -> bool:
        """Whether ``entry`` must stay: a live try holds it, or a try that held it ended less than ``grace`` ago
        and may be handing it on right now (the new try's queue write not landed yet)."""
        return any(holds(ti, limit_id, entry)
                   or (ti.end_date is not None and now - ti.end_date < grace)
                   for ti in self.tries(limit_id, entry))
