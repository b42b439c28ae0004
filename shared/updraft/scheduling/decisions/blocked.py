"""Why a task instance is not running, as data: Airflow's task-instance dependencies, one reason each.

Airflow answers "why is my task not running?" (the UI's task-instance details, ``airflow tasks failed-deps``)
with one ``TIDepStatus`` per failed dependency. Here a reason is a dependency the evaluation found unmet (a
trigger rule, the previous run, a retry wait) or a limit the claim could not take (a full or missing pool, the
run's max_active_tasks, a task's max_active_tis_per_dag(run), parallelism), worded as Airflow words it. A
scheduled instance's last limit reason is stored on it (``TaskInstance.blocked_reason``) in ``stored`` form.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from updraft.scheduling.decisions.deps.base import DepStatus


class BlockKind(enum.StrEnum):
    DEP = "dep"
    POOL_FULL = "pool_full"
    POOL_MISSING = "pool_missing"
    MAX_ACTIVE_TASKS = "max_active_tasks"
    MAX_ACTIVE_TIS_PER_DAG = "max_active_tis_per_dag"
    MAX_ACTIVE_TIS_PER_DAGRUN = "max_active_tis_per_dagrun"
    PARALLELISM = "parallelism"
    CONTENDED = "contended"  # Updraft's: the limits' counters were held by other transactions on every attempt


# The dependency name Airflow shows beside each kind of limit refusal.
_DEP_NAMES = {
    BlockKind.POOL_FULL: "Pool Slots Available",
    BlockKind.POOL_MISSING: "Pool Slots Available",
    BlockKind.MAX_ACTIVE_TASKS: "DAG Run Concurrency",
    BlockKind.MAX_ACTIVE_TIS_PER_DAG: "Task Concurrency",
    BlockKind.MAX_ACTIVE_TIS_PER_DAGRUN: "Task Concurrency",
    BlockKind.PARALLELISM: "Parallelism",
    BlockKind.CONTENDED: "Pool Slots Available",
}
_SEPARATOR = ": "


@dataclass(frozen=True)
class BlockedReason:
    kind: BlockKind
    message: str
    dep: str = ""  # the dependency's name as Airflow shows it ("Trigger Rule", "Pool Slots Available", ...)

    def __str__(self) -> str:
        return self.message

    def __contains__(self, text: str) -> bool:
        """``"does not exist" in reason``: a reason tests as free text does."""
        return text in self.message

    @property
    def stored(self) -> str:
        """The form kept in ``TaskInstance.blocked_reason`` (one short string: no extra attribute per kind)."""
        return f"{self.kind.value}{_SEPARATOR}{self.message}"

    @classmethod
    def from_stored(cls, text: str) -> BlockedReason:
        kind, sep, message = text.partition(_SEPARATOR)
        if sep and kind in BlockKind.__members__.values():
            block = BlockKind(kind)
            return cls(block, message, _DEP_NAMES.get(block, ""))
        return cls(BlockKind.DEP, text)

    @classmethod
    def from_dep(cls, status: DepStatus) -> BlockedReason:
        return cls(BlockKind.DEP, status.reason, status.name)

    @classmethod
    def from_dependency(cls, name: str, message: str) -> BlockedReason:
        """A reason as the API's ``.../dependencies`` reports it (Airflow's name and reason, no kind): the kind
        comes back from the name, and where two kinds share one, from the wording above that tells them apart."""
        kinds = [kind for kind, dep in _DEP_NAMES.items() if dep == name]
        if not kinds:  # the API names an unnamed dependency by its kind
            return cls(BlockKind.DEP, message, "" if name == BlockKind.DEP.value else name)
        if BlockKind.POOL_MISSING in kinds:
            kind = BlockKind.POOL_MISSING if message.endswith("does not exist") else BlockKind.POOL_FULL
        elif BlockKind.MAX_ACTIVE_TIS_PER_DAGRUN in kinds:
            per_run = "per run" in message
            kind = BlockKind.MAX_ACTIVE_TIS_PER_DAGRUN if per_run else BlockKind.MAX_ACTIVE_TIS_PER_DAG
        else:
            [kind] = kinds
        return cls(kind, message, name)

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "dep": self.dep, "message": self.message}


def _limit(kind: BlockKind, message: str) -> BlockedReason:
    return BlockedReason(kind, message, _DEP_NAMES[kind])


def pool_missing(pool: str) -> BlockedReason:
    return _limit(BlockKind.POOL_MISSING, f"The pool '{pool}' does not exist")


def pool_too_small(pool: str, size: int, slots: int) -> BlockedReason:
    return _limit(BlockKind.POOL_FULL, f"The task needs {slots} slots but pool '{pool}' has {size}")


def pool_full(pool: str, slots: int) -> BlockedReason:
    open_slots = "0" if slots == 1 else f"fewer than {slots}"
    return _limit(BlockKind.POOL_FULL, f"Not scheduling since there are {open_slots} open slots in pool {pool} "
                                       f"and require {slots} pool slots")


def max_active_tasks(limit: int) -> BlockedReason:
    return _limit(BlockKind.MAX_ACTIVE_TASKS,
                  f"The maximum number of running tasks ({limit}) for this DAG run has been reached")


def max_active_tis_per_dag(limit: int) -> BlockedReason:
    return _limit(BlockKind.MAX_ACTIVE_TIS_PER_DAG, f"The max task concurrency ({limit}) has been reached")


def max_active_tis_per_dagrun(limit: int) -> BlockedReason:
    return _limit(BlockKind.MAX_ACTIVE_TIS_PER_DAGRUN,
                  f"The max task concurrency per run ({limit}) has been reached")


def parallelism(limit: int) -> BlockedReason:
    return _limit(BlockKind.PARALLELISM, f"Not scheduling since there are no open slots of parallelism ({limit})")


def contended() -> BlockedReason:
    return _limit(BlockKind.CONTENDED, "Not scheduling yet: other claims and ends held this task's limits on every "
                                       "attempt; it is claimed when one of its run's tries ends, or at the next tick")
