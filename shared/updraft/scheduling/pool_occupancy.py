"""How a pool's slots are used: Airflow's slot counts by state, from the tries holding the pool.

The holders are the tries whose ticket holds a slot of the pool (``updraft.limits``): instances of the active
runs, read. ``occupied`` is every held slot; ``running`` and ``queued`` split them by the holding try's state;
``open`` is what is left (-1: unlimited). A deferred try gives its slot back unless its pool has
``include_deferred`` (Airflow's: deferred tasks count against the pool); then ``deferred`` counts it, and
``scheduled`` while its resumed try waits to be claimed again.

The pools API answers these counts and the scheduler function emits them as Airflow's ``pool.*_slots`` gauges.
"""

from __future__ import annotations

from typing import Any

from updraft.limits import Ticket
from updraft.model.limits import pool_limit
from updraft.model.states import TaskInstanceState


def pool_occupancy(store: Any, pool: Any) -> dict[str, int]:
    """``pool``'s (a ``store.api.Pool``) slots: ``occupied``, ``running``, ``queued``, ``deferred``,
    ``scheduled`` and ``open``."""
    limit_id = pool_limit(pool.name)
    occupied = running = deferred = scheduled = 0
    for ti in _ticket_holders(store, limit_id):
        slots = Ticket.decode(ti.ticket).slots(limit_id)
        occupied += slots
        if ti.state == TaskInstanceState.RUNNING:
            running += slots
        elif ti.state == TaskInstanceState.DEFERRED:
            deferred += slots
        elif ti.state == TaskInstanceState.SCHEDULED:
            scheduled += slots
    return {"occupied": occupied, "running": running, "deferred": deferred, "scheduled": scheduled,
            "queued": occupied - running - deferred - scheduled,
            "open": -1 if pool.slots < 0 else max(pool.slots - occupied, 0)}


def _ticket_holders(store: Any, limit_id: str) -> list[Any]:
    """The tries whose ticket holds a slot of ``limit_id``: a holder is an instance of an active run (queued,
    running, deferred, or scheduled to resume with its kept slot), so the active runs' instances are read."""
    return [ti for run in store.active_runs() for ti in store.get_run_tis(run.dag_id, run.run_id)
            if ti.ticket and Ticket.decode(ti.ticket).slots(limit_id)]
