"""Whether a run's end (or a try the scheduler failed) calls for user callbacks, with what, and the worker's fence
that runs them once.

Airflow's ``DagRun.update_state`` produces a ``DagCallbackRequest`` when it sets a run to success or failed and
the DAG has the matching callback; the DAG processor runs it. Here the scheduler that wins the run's end (the
single conditional write from running to success/failed) builds the request and hands it to the executor, so
exactly one request is sent per run end however many schedulers race; its id is derived from the run and the end
written, so a re-sent request is recognised. The worker then takes the run's callback fence before running
anything (``claim_callback``), so an at-least-once delivery runs the callbacks once.

Airflow's reason strings and the task instance it builds the context around (its ``last_ti``):
``success`` (the last task to succeed), ``task_failure`` (the last to fail), ``all_tasks_deadlocked`` (the first
unfinished instance with a finished upstream task) and ``timed_out`` (``dagrun_timeout``: the unfinished instance
that started last).

A try the scheduler fails because its worker went quiet (a zombie, an execution timeout the worker did not
enforce) never ran its failure or retry callbacks or its email alert; Airflow then sends a ``TaskCallbackRequest``
(and an ``EmailRequest``) to the DAG processor, and so does the scheduler here when its write failing the try won.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable

from updraft.executors.callback_requests import DagCallbackRequest, TaskCallbackRequest
from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import FAILED_TRY_STATES, UNFINISHED_TI_STATES, DagRunState, TaskInstanceState
from updraft.scheduling.decisions.backstops import EXECUTION_TIMEOUT_NOTE, ZOMBIE_NOTE
from updraft.scheduling.decisions.changes import TIChange
from updraft.serialization.model import SerializedDAG, SerializedTask
from updraft.store.api import Store

REASONS = ("success", "task_failure", "all_tasks_deadlocked", "timed_out")
_MIN = dt.datetime.min.replace(tzinfo=dt.UTC)


def callback_request(dag: SerializedDAG, run: DagRun, state: DagRunState, note: str | None,
                     tis: Iterable[TaskInstance], *, end_date: dt.datetime) -> DagCallbackRequest | None:
    """The request for the run ``state`` ended with at ``end_date`` (None when the DAG has no such callback).

    ``note`` is the run note the scheduler wrote ("task_failure: ...", "timed_out: ..."); ``tis`` the run's
    instances as the scheduler last saw them.
    """
    success = state == DagRunState.SUCCESS
    if ("on_success_callback" if success else "on_failure_callback") not in dag.callbacks:
        return None
    reason = "success" if success else (note or "task_failure").split(":", 1)[0]
    if reason not in REASONS:
        reason = "task_failure"
    digest = hashlib.sha256("\0".join((run.dag_id, run.run_id, state.value, end_date.isoformat())).encode())
    return DagCallbackRequest.for_run(run.dag_id, run.run_id, request_id=f"cb-{digest.hexdigest()[:40]}",
                                      success=success, reason=reason, ti_key=relevant_ti(dag, reason, list(tis)))


def relevant_ti(dag: SerializedDAG, reason: str, tis: list[TaskInstance]) -> TIKey | None:
    """The instance Airflow builds the callback's context around, or None (then the context is minimal)."""
    if reason in ("success", "task_failure"):
        wanted = TaskInstanceState.SUCCESS if reason == "success" else TaskInstanceState.FAILED
        ended = [ti for ti in tis if ti.state == wanted]
        return max(ended, key=lambda ti: ti.end_date or _MIN).key if ended else None
    if reason == "all_tasks_deadlocked":
        finished = {ti.task_id for ti in tis if ti.state not in UNFINISHED_TI_STATES}
        for ti in tis:
            task = dag.task_dict.get(ti.task_id)
            if ti.state in UNFINISHED_TI_STATES and task is not None and finished & set(task.upstream_task_ids):
                return ti.key
        return None
    # timed_out: the scheduler skipped every unfinished instance with the timeout's note; one that never started
    # got its start_date from that same moment, so it counts as not started, as in Airflow.
    cut = [ti for ti in tis if ti.state == TaskInstanceState.SKIPPED and (ti.note or "").startswith("dagrun_timeout")]
    return max(cut, key=_started).key if cut else None


def _started(ti: TaskInstance) -> dt.datetime:
    """When the instance's try started; never (the earliest) when the scheduler's skip gave it its start."""
    return ti.start_date if ti.start_date is not None and ti.start_date != ti.end_date else _MIN


def task_callback_request(task: SerializedTask, before: TaskInstance,
                          change: TIChange) -> TaskCallbackRequest | None:
    """The request for a running try the scheduler just failed (``change`` applied over ``before``), when the
    worker never could run its callbacks and the task has the failure/retry callbacks or email alert it calls
    for; None otherwise."""
    note = str(change.fields.get("note") or "")
    if before.state != TaskInstanceState.RUNNING or not note.startswith((ZOMBIE_NOTE, EXECUTION_TIMEOUT_NOTE)):
        return None
    retried = change.state == TaskInstanceState.UP_FOR_RETRY
    if change.state not in FAILED_TRY_STATES:
        return None
    callback = "on_retry_callback" if retried else "on_failure_callback"
    emails = bool(task.email) and (task.email_on_retry if retried else task.email_on_failure)
    if callback not in task.callbacks and not emails:
        return None
    key = before.key
    digest = hashlib.sha256("\0".join((key.dag_id, key.run_id, key.task_id, str(key.map_index),
                                       str(before.try_number), change.state.value)).encode())
    return TaskCallbackRequest.for_try(key, before.try_number, request_id=f"tcb-{digest.hexdigest()[:40]}",
                                       retried=retried, message=note)


def claim_callback(store: Store, request: DagCallbackRequest | TaskCallbackRequest) -> bool:
    """True for the first delivery of ``request``, False for any duplicate: the run's callback fence, a
    conditional put of the request's own item (``Store.claim_callback``)."""
    return store.claim_callback(request.key.dag_id, request.key.run_id, request.request_id)
