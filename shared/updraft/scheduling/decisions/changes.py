"""What an evaluation decides, as data: the conditional writes to make and the run's final state, if any.

A ``TIChange`` is exactly one conditional write in the store: move ``key`` from ``expected`` (None: the item does
not exist yet) to ``state``, setting ``fields``, and only if the current try is still ``expected_try_id`` when
given (fencing a worker whose try was ended by the scheduler). Applying them in order is always safe: a write
that loses a race to another scheduler changes nothing, and the next evaluation starts from what is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from updraft.model.records import TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.decisions.deps.base import DepStatus


@dataclass(frozen=True)
class TIChange:
    key: TIKey
    expected: TaskInstanceState | None
    state: TaskInstanceState
    fields: dict[str, Any] = field(default_factory=dict)
    expected_try_id: str | None = None


@dataclass
class RunEvaluation:
    changes: list[TIChange] = field(default_factory=list)
    run_state: DagRunState | None = None  # success/failed when the run is over; None: it goes on
    run_note: str | None = None  # why the run ended (Airflow's reasons: task_failure, timed_out, ...)
    blocked: dict[TIKey, list[DepStatus]] = field(default_factory=dict)  # why each waiting instance waits
    # Mapped tasks this evaluation expanded whose ends are counted (``counted_ends``): their instance counts,
    # recorded before the instances are created.
    expanded: dict[str, int] = field(default_factory=dict)

    @property
    def scheduled(self) -> list[TIKey]:
        """Instances this evaluation moved to ``scheduled``: the claim candidates it created."""
        return [c.key for c in self.changes if c.state == TaskInstanceState.SCHEDULED]
