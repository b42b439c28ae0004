"""Deleting a DAG, as Airflow's ``delete_dag``: refused while one of its task instances runs, else its runs,
task instances, XComs, versions and row are deleted (the event log keeps its entries, as Airflow keeps ``log``).

What Updraft adds: slots. A queued task instance holds pool, parallelism and concurrency slots, and an active
run holds its DAG's ``max_active_runs`` slot; they are released before the items go, so no limit keeps a holder
that no longer exists: an instance's ticket goes with its item, in one transaction (``holding.delete_releasing``),
and the DAG's row goes last, so a crash at any point leaves the DAG found and a retry releases what is left.
A DAG whose file still defines it comes back, new and paused at creation, the next time the file is parsed (its
next upload), as it does in Airflow on the next parse.
"""

from __future__ import annotations

from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling import run_slots
from updraft.scheduling.deferrals import Waits, stop_waits
from updraft.scheduling.holding import delete_releasing
from updraft.store.api import Store
from updraft.store.state_stores import clear_task_states


class DagStillRunning(Exception):
    """A task instance of the DAG is running: deleting its items under it would lose its result. The message is
    Airflow's (its API answers it as the 409's detail); ``dag_id`` names the DAG."""

    def __init__(self, dag_id: str) -> None:
        super().__init__(f"Task instances of dag with id: '{dag_id}' are still running")
        self.dag_id = dag_id


def delete_dag(store: Store, dag_id: str, *, waits: Waits | None = None) -> bool:
    """Delete ``dag_id``'s items; False when the DAG does not exist. Idempotent: a retry finishes the job. The
    waits of its deferred tries are stopped (on ``waits``)."""
    if store.get_dag_meta(dag_id) is None:
        return False
    runs = store.list_runs(dag_id)
    instances = {run.run_id: store.get_run_tis(dag_id, run.run_id) for run in runs}
    if any(ti.state == TaskInstanceState.RUNNING for tis in instances.values() for ti in tis):
        raise DagStillRunning(dag_id)
    for run in runs:
        stop_waits(waits, instances[run.run_id])
        for ti in instances[run.run_id]:
            if ti.ticket:
                delete_releasing(store, ti)
        if run.ticket is not None:  # its run limit's slot, with the run's item (the DAG's partition goes after)
            run_slots.delete_releasing(store, run, expected=tuple(DagRunState))
        clear_task_states(store, [ti.key for ti in instances[run.run_id]])
        store.delete_run_items(dag_id, run.run_id)
    store.delete_dag_items(dag_id)
    return True
