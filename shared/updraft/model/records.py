"""What the store keeps about runs and task instances, as plain dataclasses shared by storage and decisions.

The pure scheduling code reads and returns these; the store turns them into DynamoDB items. Keeping them free of
storage types is what lets the decisions be tested without AWS and run unchanged in Lambda and locally.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any, NamedTuple

from updraft.model.states import DagRunState, TaskInstanceState

UNMAPPED = -1


class TIKey(NamedTuple):
    dag_id: str
    run_id: str
    task_id: str
    map_index: int = UNMAPPED

    @property
    def label(self) -> str:
        return self.task_id if self.map_index == UNMAPPED else f"{self.task_id}[{self.map_index}]"


@dataclasses.dataclass
class TaskInstance:
    """One try-able unit: a task in a run (one per map index for a mapped task)."""

    dag_id: str
    run_id: str
    task_id: str
    map_index: int = UNMAPPED
    state: TaskInstanceState | None = None  # None: never touched (Airflow's "no status")
    try_number: int = 0  # tries that started or were claimed, as Airflow 3 counts them
    try_id: str | None = None  # fencing token of the current try; every worker write must match it
    pool: str = "default_pool"
    pool_slots: int = 1
    priority_weight: int = 1
    executor: str = "lambda"
    queued_at: dt.datetime | None = None
    start_date: dt.datetime | None = None
    end_date: dt.datetime | None = None
    next_retry_at: dt.datetime | None = None
    lease_expires_at: dt.datetime | None = None  # a running try's worker must heartbeat before this
    # The limit slots this try holds, as ``updraft.limits`` encoded them (its ``Ticket``): written only with the
    # counters it records, in one transaction; opaque to everything else. None: it holds none through a ticket.
    ticket: str | None = None
    hostname: str | None = None
    # Length of the return_value XCom when the try succeeded: what a downstream mapped task expands over.
    xcom_length: int | None = None
    note: str | None = None  # why the scheduler set the state (timeouts, zombies, upstream failures)
    # The last reason the scheduler did not queue it (a failed dep, a full or missing pool, max_active_tasks,
    # parallelism): "why is my task not running". A claim to queued clears it.
    blocked_reason: str | None = None
    # Airflow's max_tries once a clear extended it (try_number + retries at the clear); None: the task's retries.
    max_tries: int | None = None
    # The current try's rendered template fields, serialized and redacted by its worker (Airflow's
    # RenderedTaskInstanceFields); None: no try rendered any yet. The try's end writes them, or set_rendered_fields
    # while it still runs (``runtime.rendered_fields.HeldFields``).
    rendered_fields: dict[str, Any] | None = None
    # A deferred try's wait (``model.deferrals.Deferral.to_record``: Airflow's trigger and trigger_timeout) and
    # where it resumes (Airflow's next_method / next_kwargs, JSON); kept while it is resumed, removed when it ends.
    trigger: dict[str, Any] | None = None
    next_method: str | None = None
    next_kwargs: dict[str, Any] | None = None
    # Airflow's task_reschedules for the current try, kept small (a sensor may poke ten thousand times): how many
    # pokes of a reschedule-mode sensor ended ``up_for_reschedule``, when the first of them started (the sensor's
    # ``timeout`` counts from it), and the try_id of the poke that asked to be rescheduled last (the claim continues
    # the same try_number only while it is still the instance's try). The reschedule date is ``next_retry_at``.
    reschedule_count: int = 0
    first_reschedule_date: dt.datetime | None = None
    rescheduled_try_id: str | None = None
    # A Human-in-the-loop request and its response (``model.hitl``: Airflow's hitl_detail), of the try it names.
    hitl: dict[str, Any] | None = None
    # What the try used of each metered service (``model.usage.Usage.to_record``), written by its end write.
    usage: dict[str, Any] | None = None

    @property
    def key(self) -> TIKey:
        return TIKey(self.dag_id, self.run_id, self.task_id, self.map_index)



@dataclasses.dataclass
class DagRun:
    dag_id: str
    run_id: str
    run_type: str
    dag_hash: str  # the serialized DAG version the run is pinned to
    state: DagRunState = DagRunState.QUEUED
    logical_date: dt.datetime | None = None
    data_interval_start: dt.datetime | None = None
    data_interval_end: dt.datetime | None = None
    run_after: dt.datetime | None = None
    conf: dict[str, Any] = dataclasses.field(default_factory=dict)
    queued_at: dt.datetime | None = None
    start_date: dt.datetime | None = None
    end_date: dt.datetime | None = None
    note: str | None = None
    # Asset partitions (Airflow 3.3): the partition a run is for, and that partition's date (None: not temporal).
    partition_key: str | None = None
    partition_date: dt.datetime | None = None
    # Who triggered a manual run (Airflow's ``triggered_by``: "ui", "rest_api", ...; and the user's name); None for
    # the run types whose origin is their type (a schedule, an asset, a backfill, an operator).
    triggered_by: str | None = None
    triggering_user_name: str | None = None
    # The slot of its run limit (max_active_runs, or its backfill's) the run holds, as ``updraft.limits`` encoded
    # it: taken with its start (a backfill run's: with its creation), given back with its end. None: none held.
    ticket: str | None = None
    # How many partition keys its task instances spread over: the store chooses it when it creates the run
    # (``store.run_shards``), and it never changes.
    ti_shards: int = 1
