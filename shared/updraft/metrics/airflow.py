"""What each part of Updraft reports as Airflow's metrics, when it happens (``names`` says which and why).

One ``AirflowMetrics`` per process (``Services.metrics``; the scheduler holds it as ``Scheduler.metrics``): the
scheduler calls ``run_started`` / ``run_finished`` when its write started or ended a run, the worker
``try_started`` / ``try_finished`` when its fenced write started or ended a try, the scheduler function
``scheduler_pass`` and ``pool_slots`` after a tick, the parser function ``files_parsed``. Each emits only names
of ``names.EMITTED``, with Airflow's tags as dimensions; a name outside it is a programming error (ValueError).
Every figure is computed from the records the caller already has: emitting costs no store request.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping

from updraft.metrics.emf import EmfWriter
from updraft.metrics.names import EMITTED
from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import FAILED_TRY_STATES, FINISHED_RUN_STATES, DagRunType, TaskInstanceState

BUNDLE_NAME = "dags-folder"  # Airflow 3's default bundle: the one DAGs folder an environment has


def _ms(span: dt.timedelta) -> float:
    return span.total_seconds() * 1000.0


class AirflowMetrics:
    def __init__(self, writer: EmfWriter | None = None) -> None:
        self.writer = writer or EmfWriter("Updraft", None)

    # -- Airflow's three kinds ----------------------------------------------------------------------------------
    def timing(self, name: str, span: dt.timedelta, **dimensions: str) -> None:
        self._put(name, _ms(span), "Milliseconds", dimensions)

    def incr(self, name: str, count: float = 1, **dimensions: str) -> None:
        self._put(name, count, "Count", dimensions)

    def gauge(self, name: str, value: float, **dimensions: str) -> None:
        self._put(name, value, "None", dimensions)

    def _put(self, name: str, value: float, unit: str, dimensions: Mapping[str, str]) -> None:
        if name not in EMITTED:
            raise ValueError(f"{name!r} is not one of Airflow's metrics Updraft emits (updraft.metrics.names)")
        self.writer.put(name, value, unit, dimensions)

    # -- runs (the scheduler) -----------------------------------------------------------------------------------
    def run_started(self, run: DagRun, now: dt.datetime) -> None:
        """``run`` (as read before its start: ``start_date`` None on its first start) was started at ``now``.
        As Airflow: the delay of a scheduled run's first start after its ``run_after`` (a cleared run restarting,
        a manual, asset-triggered or backfill run has none)."""
        if run.run_type == DagRunType.SCHEDULED and run.start_date is None and run.run_after is not None:
            self.timing("dagrun.schedule_delay", now - run.run_after, dag_id=run.dag_id)

    def run_finished(self, run: DagRun, state: str, now: dt.datetime, tis: Iterable[TaskInstance]) -> None:
        """``run`` was ended in ``state`` at ``now``; ``tis``: its instances as the deciding pass saw them."""
        if run.start_date is not None and state in FINISHED_RUN_STATES:
            self.timing(f"dagrun.duration.{state}", now - run.start_date, dag_id=run.dag_id)
        starts = [ti.start_date for ti in tis if ti.start_date is not None]
        if not starts:
            return
        first = min(starts)
        if run.run_type == DagRunType.SCHEDULED and run.run_after is not None and first > run.run_after:
            self.timing("dagrun.first_task_scheduling_delay", first - run.run_after, dag_id=run.dag_id)
        if run.queued_at is not None and first > run.queued_at:
            self.timing("dagrun.first_task_start_delay", first - run.queued_at, dag_id=run.dag_id)

    # -- tries (the worker) ---------------------------------------------------------------------------------------
    def try_started(self, ti: TaskInstance) -> None:
        """``ti`` as the worker's fenced start left it (running, with its start date)."""
        self.incr("ti.start", dag_id=ti.dag_id, task_id=ti.task_id)
        if ti.queued_at is not None and ti.start_date is not None and ti.start_date >= ti.queued_at:
            self.timing("task.queued_duration", ti.start_date - ti.queued_at, dag_id=ti.dag_id, task_id=ti.task_id)

    def try_finished(self, ti: TaskInstance, end: dt.datetime, operator: str | None) -> None:
        """``ti`` as the worker's fenced end recorded it (in the state the try ended in: ``up_for_retry`` for a
        failure with retries left) at ``end``; ``operator``: its task's operator class. As Airflow, a failure
        counts in ``ti_failures`` whether or not it is retried."""
        state = str(getattr(ti.state, "value", ti.state))
        self.incr("ti.finish", dag_id=ti.dag_id, task_id=ti.task_id, state=state)
        if ti.start_date is not None:
            self.timing("task.duration", end - ti.start_date, dag_id=ti.dag_id, task_id=ti.task_id)
        if state == TaskInstanceState.SUCCESS:
            self.incr("ti_successes")
            if operator:
                self.incr("operator_successes", operator_name=operator)
        elif state in FAILED_TRY_STATES:
            self.incr("ti_failures")
            if operator:
                self.incr("operator_failures", operator_name=operator)

    # -- the scheduler function's tick ----------------------------------------------------------------------------
    def scheduler_pass(self, span: dt.timedelta, *, running_runs: int, executable: int, starving: int) -> None:
        self.incr("scheduler_heartbeat")
        self.timing("scheduler.scheduler_loop_duration", span)
        self.gauge("scheduler.dagruns.running", running_runs)
        self.gauge("scheduler.tasks.executable", executable)
        self.gauge("scheduler.tasks.starving", starving)

    def pool_slots(self, pool_name: str, slots: Mapping[str, int]) -> None:
        """One pool's slots by state: ``open``, ``queued``, ``running``, ``deferred``, ``scheduled`` (as the
        pools API counts them: ``scheduling.pool_occupancy``)."""
        for state in ("open", "queued", "running", "deferred", "scheduled"):
            self.gauge(f"pool.{state}_slots", slots[state], pool_name=pool_name)

    # -- the parser function ------------------------------------------------------------------------------------
    def files_parsed(self, seconds: Mapping[str, float], *, dags: int, failed: int,
                     import_errors: int | None) -> None:
        """An invocation parsed the files of ``seconds`` (relative path -> how long its parse took), finding
        ``dags`` DAGs; ``failed`` files could not be handled; the environment now has ``import_errors`` (None:
        unknown)."""
        self.incr("dag_processor_heartbeat")
        for path, spent in seconds.items():
            self.timing("dag_processing.last_duration", dt.timedelta(seconds=spent), bundle_name=BUNDLE_NAME,
                        file_name=path)
        if seconds:
            self.incr("dag_processing.processes", len(seconds))
            self.gauge("dag_processing.total_parse_time", sum(seconds.values()))
            self.gauge("dagbag_size", dags)
        if failed:
            self.incr("dag_file_refresh_error", failed)
        if import_errors is not None:
            self.gauge("dag_processing.import_errors", import_errors)
