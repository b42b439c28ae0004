"""Evaluate one run: every decision a state change implies, computed from what is stored, without AWS.

``evaluate_run`` is Airflow's ``_schedule_dag_run`` + ``DagRun.update_state`` + ``schedule_tis`` for one run, plus
the checks Airflow's scheduler loop makes on running tries (zombies, stuck queues), in this order:

1. a run that is not running decides nothing (its instances are reported blocked by "Dagrun Running");
2. ``dagrun_timeout``: past ``start_date + dagrun_timeout`` the run fails and every unfinished instance is skipped;
3. backstops for tries whose worker went quiet (``backstops``);
4. ``fail_fast``: once a task has failed, every other unfinished instance stops (running: failed, else skipped)
   and the run fails;
5. every schedulable instance, in topological order: its dependencies (retry period, previous run, trigger
   rule) either schedule it, finish it in the scheduler (an ``EmptyOperator``), expand it (a mapped task whose
   values are known), mark it ``skipped``/``upstream_failed`` (it can never run), or leave it waiting with the
   reasons in ``blocked``. Decisions update the view as they are made, so a failure marks a whole branch and an
   ``EmptyOperator`` lets its downstream be scheduled in the same evaluation instead of one level per pass;
6. the run's final state (``run_state``).
The result is a list of conditional writes; applying them is the store's and the scheduler's business.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from updraft.executors.choice import executor_for
from updraft.model.records import UNMAPPED, DagRun, TaskInstance, TIKey
from updraft.model.states import (
    KEPT_BY_FAIL_FAST,
    SCHEDULABLE_TI_STATES,
    TICKET_HOLDING_STATES,
    UNFINISHED_TI_STATES,
    DagRunState,
    TaskInstanceState,
)
from updraft.scheduling.counted_ends import counts_mapped_ends
from updraft.scheduling.decisions.backstops import backstop_change
from updraft.scheduling.decisions.changes import RunEvaluation, TIChange
from updraft.scheduling.decisions.deps import (
    DepStatus,
    PreviousRun,
    TriggerRule,
    dagrun_running_status,
    evaluate_trigger_rule,
    failing,
    not_in_retry_period_status,
    prev_dagrun_status,
    ready_to_reschedule_status,
)
from updraft.scheduling.decisions.deps.trigger_rule import NAME as TRIGGER_RULE
from updraft.scheduling.decisions.deps.trigger_rule import UpstreamCounts
from updraft.scheduling.decisions.mapping import complete_partial_expansions, map_length
from updraft.scheduling.decisions.run_state import run_outcome
from updraft.scheduling.decisions.run_view import RunView
from updraft.scheduling.decisions.setup_teardown_rules import SetupTeardownRules
from updraft.scheduling.decisions.task_graph import has_setups
from updraft.serialization.model import SerializedDAG, SerializedTask

__all__ = ["RunEvaluation", "TIChange", "evaluate_run", "evaluate_tasks"]

TI = TaskInstanceState
# Airflow finishes these EmptyOperators itself; with a callback, inlets or outlets they need a worker.
_WORKER_CALLBACKS = frozenset({"on_execute_callback", "on_success_callback"})


def evaluate_run(dag: SerializedDAG, run: DagRun, tis: list[TaskInstance], *, now: dt.datetime,
                 previous_tis: list[TaskInstance] | None = None, has_previous_run: bool = False,
                 previous_run: DagRun | None = None) -> RunEvaluation:
    """Decide what ``run`` needs now. ``previous_tis`` are the previous run's instances (for depends_on_past);
    None with ``has_previous_run=False`` means the DAG has no previous run. ``previous_run`` (optional) gives its
    logical date, which Airflow uses to let a task run when the previous run predates the task's start date."""
    previous = None
    if previous_tis is not None or has_previous_run or previous_run is not None:
        previous = PreviousRun(list(previous_tis or ()), previous_run.logical_date if previous_run else None)
    return _Evaluation(dag, run, tis, now, previous).evaluate()


def evaluate_tasks(dag: SerializedDAG, run: DagRun, tis: list[TaskInstance], task_ids: Iterable[str], *,
                   now: dt.datetime) -> RunEvaluation:
    """Decide only the instances of ``task_ids``, from ``tis``: the items those decisions depend on (their
    upstream instances), not the whole run. The mini scheduler's incremental step (``scheduling.downstream``)
    after one try ended; it makes step 5 alone, leaving the run-wide steps (timeout, backstops, fail_fast, the
    run's end) to the evaluations of the whole run."""
    evaluation = _Evaluation(dag, run, tis, now, None)
    if run.state != DagRunState.RUNNING or not dagrun_running_status(run, now).passed:
        return evaluation.result
    wanted = set(task_ids) & evaluation.view.in_run
    for task_id in evaluation.view.order:
        if task_id in wanted:
            for key in evaluation.view.instances(task_id):
                if evaluation.view.state(key) in SCHEDULABLE_TI_STATES:
                    evaluation._decide(evaluation.view.tasks[task_id], key)
    return evaluation.result


class _Evaluation:
    def __init__(self, dag: SerializedDAG, run: DagRun, tis: list[TaskInstance], now: dt.datetime,
                 previous: PreviousRun | None) -> None:
        self.dag = dag
        self.run = run
        self.now = now
        self.previous = previous
        self.view = RunView(dag, run, tis)
        self.result = RunEvaluation()
        # Upstream counts per task, dropped when an upstream instance changes: every instance of a mapped task
        # shares its task's upstream counts, so a wide expansion is counted once, not once per instance.
        self._counts: dict[str, UpstreamCounts | None] = {}
        self._setups = SetupTeardownRules(dag, self.view) if has_setups(dag) else None
        self._stopped_note = ""  # set when fail_fast stopped the run but its teardowns still run

    # -- the steps ---------------------------------------------------------------------------------------------
    def evaluate(self) -> RunEvaluation:
        running = dagrun_running_status(self.run, self.now)
        if self.run.state != DagRunState.RUNNING:
            self._block_all(running)
            return self.result
        complete_partial_expansions(self.view)
        if self._timed_out():
            return self.result
        self._backstops()
        if self._fail_fast():
            return self.result
        if not running.passed:  # logical date in the future: Airflow leaves the run alone
            self._block_all(running)
            return self.result
        for task_id in self.view.order:
            if task_id in self.view.in_run:
                for key in self.view.instances(task_id):
                    if self.view.state(key) in SCHEDULABLE_TI_STATES:
                        self._decide(self.view.tasks[task_id], key)
        self.result.run_state, self.result.run_note = run_outcome(self.view, self._can_run)
        if self.result.run_state is not None and self._stopped_note:  # fail_fast, once the teardowns are done
            self.result.run_state, self.result.run_note = DagRunState.FAILED, self._stopped_note
        return self.result

    def _block_all(self, status: DepStatus) -> None:
        for key in self.view.all_instances():
            if self.view.state(key) in SCHEDULABLE_TI_STATES:
                self.result.blocked[key] = [status]

    def _timed_out(self) -> bool:
        """Airflow's dagrun_timeout: the run fails and every unfinished instance is skipped."""
        timeout = self.dag.dagrun_timeout
        start = self.run.start_date
        if timeout is None or start is None or not start < self.now - timeout:
            return False
        note = f"dagrun_timeout: the run did not finish within {timeout}"
        for key in self.view.all_instances():
            if self.view.state(key) in UNFINISHED_TI_STATES:
                self._finish(key, TI.SKIPPED, note)
        self.result.run_state = DagRunState.FAILED
        self.result.run_note = f"timed_out: the run did not finish within {timeout}"
        return True

    def _backstops(self) -> None:
        for key in self.view.all_instances():
            ti = self.view.ti(key)
            if ti is not None:
                change = backstop_change(self.view.tasks[key.task_id], ti, self.now,
                                         logical_date=self.run.logical_date)
                if change is not None:
                    self._record(change)

    def _fail_fast(self) -> bool:
        """Airflow's ``_stop_remaining_tasks``: when a task of a fail_fast DAG fails, nothing else goes on but its
        teardowns, which still release what was set up; the run fails once they are done."""
        if not self.dag.fail_fast:
            return False
        failed = sorted({k.task_id for k in self.view.all_instances() if self.view.state(k) == TI.FAILED})
        if not failed:
            return False
        note = f"fail_fast: stopped because {', '.join(failed)} failed"
        teardowns_left = False
        for key in self.view.all_instances():
            state = self.view.state(key)
            if key.task_id in failed or state in KEPT_BY_FAIL_FAST:
                continue
            if self.view.tasks[key.task_id].is_teardown:
                teardowns_left = teardowns_left or state in UNFINISHED_TI_STATES
                continue
            self._finish(key, TI.FAILED if state == TI.RUNNING else TI.SKIPPED, note)
        if teardowns_left:
            self._stopped_note = note
            return False
        self.result.run_state = DagRunState.FAILED
        self.result.run_note = note
        return True

    # -- one instance ------------------------------------------------------------------------------------------
    def _decide(self, task: SerializedTask, key: TIKey) -> None:
        if task.map_group_id and key.map_index == UNMAPPED and self.view.state(key) is None \
                and self._expand_group_task(task, key):
            return
        statuses, final_state, why = self._deps(task, key)
        if final_state is not None:
            self._finish(key, final_state, why)
            return
        blocking = [s for s in statuses if not s.passed]
        if blocking:
            self.result.blocked[key] = blocking
            return
        if task.is_mapped and key.map_index == UNMAPPED and self.view.state(key) is None:
            self._expand(task, key)
            return
        state = self.view.state(key)
        if state == TI.SCHEDULED:
            return  # already a claim candidate
        if finishes_in_scheduler(task):
            ti = self.view.ti(key)
            fields = {**self._task_fields(task), "start_date": self.now, "end_date": self.now,
                      "try_number": (ti.try_number if ti else 0) + 1}
            self._change(key, TI.SUCCESS, fields)
        else:
            self._change(key, TI.SCHEDULED, self._task_fields(task))

    def _deps(self, task: SerializedTask, key: TIKey, *, ignore_in_retry_period: bool = False
              ) -> tuple[list[DepStatus], TaskInstanceState | None, str]:
        ti = self.view.ti(key)
        state = self.view.state(key)
        wait_until = ti.next_retry_at if ti is not None else None
        past = prev_dagrun_status(task, catchup=bool(self.dag.catchup), previous=self.previous)
        if task.map_group_id and key.map_index >= 0:  # counted per index: not shared by the task's instances
            counts = self.view.upstream_counts(task, key.map_index)
        else:
            if task.task_id not in self._counts:
                self._counts[task.task_id] = self.view.upstream_counts(task)
            counts = self._counts[task.task_id]
        rule = evaluate_trigger_rule(task.trigger_rule, counts, map_index=key.map_index)
        if self._setups is not None and task.trigger_rule != TriggerRule.ALWAYS and task.upstream_task_ids:
            rule = self._setups.rule(task, key.map_index, rule)
        statuses = [
            not_in_retry_period_status(state, wait_until, self.now, ignore=ignore_in_retry_period),
            ready_to_reschedule_status(state, wait_until, self.now, ignore=ignore_in_retry_period),
            past,
            rule.status,
        ]
        final_state = rule.new_state
        if final_state == TI.SKIPPED and task.wait_for_past_depends_before_skipping and not past.passed:
            final_state = None
            statuses.append(failing(TRIGGER_RULE, "Task should be skipped but the past depends are not met"))
        return statuses, final_state, f"{final_state}: {rule.status.reason}" if final_state else ""

    def _expand(self, task: SerializedTask, key: TIKey) -> None:
        """Airflow's ``TaskMap.expand_mapped_task``, run when the unexpanded instance's dependencies pass."""
        n = map_length(task, self.view)
        if n is None:
            self._finish(key, TI.UPSTREAM_FAILED, "upstream_failed: the values to map over are not available")
        elif n == 0:
            self._finish(key, TI.SKIPPED, "skipped: mapped over an empty value")
        else:
            if counts_mapped_ends(self.dag, task):
                self.result.expanded[task.task_id] = n
            self.view.set_indexes(task.task_id, range(n))
            for index_key in self.view.instances(task.task_id):
                self._decide(task, index_key)

    def _expand_group_task(self, task: SerializedTask, key: TIKey) -> bool:
        """A task of a mapped task group expands as soon as the group's length is known, before its own
        dependencies are checked (Airflow's ``_expand_mapped_task_if_needed``), so each index then follows its own
        upstream index. False: the length is not known yet, and the unexpanded instance's dependencies decide."""
        n = map_length(task, self.view)
        if n is None:
            return False
        if n == 0:
            self._finish(key, TI.SKIPPED, "skipped: mapped over an empty value")
        else:
            self.view.set_indexes(task.task_id, range(n))
            for index_key in self.view.instances(task.task_id):
                self._decide(task, index_key)
        return True

    def _can_run(self, key: TIKey) -> bool:
        """For the deadlock check: are the instance's dependencies met, retry waits aside?"""
        statuses, _, _ = self._deps(self.view.tasks[key.task_id], key, ignore_in_retry_period=True)
        return all(s.passed for s in statuses)

    # -- recording decisions -----------------------------------------------------------------------------------
    def _task_fields(self, task: SerializedTask) -> dict[str, Any]:
        return {"pool": task.pool, "pool_slots": task.pool_slots, "priority_weight": task.effective_priority_weight,
                "executor": executor_for(task.compute, task.executor)}

    def _finish(self, key: TIKey, state: TaskInstanceState, note: str) -> None:
        """End an instance without a worker (skipped, upstream_failed, or failed by the scheduler), fenced when a
        try holds it so its worker cannot report over the decision."""
        ti = self.view.ti(key)
        fields: dict[str, Any] = {} if ti is not None else self._task_fields(self.view.tasks[key.task_id])
        fields.update(start_date=(ti.start_date if ti and ti.start_date else self.now), end_date=self.now,
                      note=note)
        if self.view.state(key) in TICKET_HOLDING_STATES:
            fields.update(lease_expires_at=None)
        # Fenced on the current try: a worker (or a racing decision) that ended the try first wins.
        self._change(key, state, fields, expected_try_id=ti.try_id if ti is not None else None)

    def _change(self, key: TIKey, state: TaskInstanceState, fields: dict[str, Any], *,
                expected_try_id: str | None = None) -> None:
        self._record(TIChange(key, self.view.state(key), state, fields, expected_try_id))

    def _record(self, change: TIChange) -> None:
        self.result.changes.append(change)
        self.view.apply(change.key, change.state, change.fields)
        for downstream_id in self.view.tasks[change.key.task_id].downstream_task_ids:
            self._counts.pop(downstream_id, None)


def finishes_in_scheduler(task: SerializedTask) -> bool:
    return bool(task.is_empty and not _WORKER_CALLBACKS.intersection(task.callbacks)
                and not task.inlets and not task.outlets)
