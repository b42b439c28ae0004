"""The scheduler: Airflow's scheduling loop as one stateless pass that any number of invocations may run at once.

A pass (the EventBridge tick) creates due runs, starts queued runs within max_active_runs, evaluates every active
run and claims what is runnable, highest priority first. ``schedule_run`` is the same work for one run, called the
moment one of its tasks finishes (Airflow's mini scheduler), so a downstream task starts without waiting for a tick;
what falls due at a known moment (a scheduled run, a retry) wakes a scheduler at that moment (``wakeups``).
The decisions come from the pure functions in this package; every write is a conditional write in the store, so a
pass that loses a race, crashes halfway, or sees an event twice leaves nothing inconsistent for the next one.

This module holds the entry points and applies evaluations; the claim pass (``claim_pass``), what a try holds
(``holding``) and a try's life after dispatch (``try_lifecycle``) are their own modules.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import threading
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from updraft.executors.base import Executor, LostTry
from updraft.limits import Acquired, Contended, Full
from updraft.metrics.airflow import AirflowMetrics
from updraft.model.limits import dag_runs_limit
from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import SLOT_HOLDING_STATES, DagRunState, DagRunType, TaskInstanceState
from updraft.scheduling import run_slots
from updraft.scheduling.backfill_pass import drive_backfills
from updraft.scheduling.claim_pass import ClaimPass, take_creations
from updraft.scheduling.claim_shares import Share
from updraft.scheduling.claims import Handing
from updraft.scheduling.dag_callbacks import callback_request, task_callback_request
from updraft.scheduling.dag_versions import pinned_dag
from updraft.scheduling.decisions.changes import RunEvaluation, TIChange
from updraft.scheduling.decisions.evaluation import evaluate_run, evaluate_tasks
from updraft.scheduling.decisions.lost_tries import lost_try_change
from updraft.scheduling.deferrals import Waits, stop_waits
from updraft.scheduling.holding import follow_parallelism, release_ticket, releases, transition_releasing
from updraft.scheduling.pass_report import PassReport
from updraft.scheduling.poison import clear_poisoned_note, describe, record_poisoned_run
from updraft.scheduling.previous_run import previous_run_tis
from updraft.scheduling.wakeups import arm_wakes, run_ended, wake_for_next_run, wake_for_retry
from updraft.serialization.model import SerializedDAG
from updraft.store.api import DagMeta, Store
from updraft.traces.run_traces import RunTraces

logger = logging.getLogger(__name__)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class SchedulerConfig:
    """Airflow's scheduler settings with its defaults."""

    parallelism: int = 32
    max_dagruns_to_create_per_loop: int = 10
    max_dagruns_per_loop_to_schedule: int = 20
    # How often a tick sizes the parallelism limit to ``parallelism`` (``holding.follow_parallelism``: one read).
    parallelism_check_interval: dt.timedelta = dt.timedelta(seconds=30)
    # The deferral sweep (``wait_sweep``) lists the wait engine's executions: rarer still, as lost waits are.
    wait_sweep_interval: dt.timedelta = dt.timedelta(minutes=5)
    # Polled asset watchers are started and stopped (``asset_watchers``) this often: an unpause starts its watchers
    # within it (a pause ends them at their next check). None: no watcher runs (``dags test``, as Airflow's).
    watcher_sweep_interval: dt.timedelta | None = dt.timedelta(minutes=1)
    # How often the tick comes: each tick arms the wake-ups of what falls due before the one after next (``wakeups``).
    tick_interval: dt.timedelta = dt.timedelta(minutes=1)


class Scheduler:
    def __init__(self, store: Store, executor: Executor, config: SchedulerConfig | None = None,
                 clock: Callable[[], dt.datetime] = utcnow, metrics: AirflowMetrics | None = None,
                 traces: RunTraces | None = None) -> None:
        self.store = store
        self.executor = executor
        self.config = config or SchedulerConfig()
        self.clock = clock
        # Airflow's metrics and the X-Ray traces of runs (and, through the worker, of tries); by default nowhere.
        self.metrics = metrics or AirflowMetrics()
        self.traces = traces or RunTraces()
        # Where deferred tries wait (Services sets it): a deferred try this scheduler ends has its wait stopped.
        self.waits: Waits | None = None
        # Asks the parser to evaluate a DAG file's custom timetables again (Services sets it; see
        # ``updraft.timetables.evaluated``): called with the file's relative path, at least once per tick that needs it.
        self.evaluate_timetables: Callable[[str], None] | None = None
        self.claims = ClaimPass(store, executor, self.dag, parallelism=self.config.parallelism)
        self._last_parallelism_check: dt.datetime | None = None
        self._last_wait_sweep: dt.datetime | None = None
        self._last_watcher_sweep: dt.datetime | None = None
        self._lock = threading.Lock()
        self._in_progress: set[tuple[str, str, Share | None]] = set()
        self._dirty: set[tuple[str, str, Share | None]] = set()
        self._rotation = 0  # where the next tick's share of the active runs starts

    # -- entry points -----------------------------------------------------------------------------------------
    def run_pass(self) -> PassReport:
        """One tick: create due runs, then schedule every active run."""
        report = PassReport()
        self.create_due_runs(report)
        self.create_asset_triggered_runs(report)
        try:
            drive_backfills(self.store, self.dag, now=self.clock(), report=report)
        except Exception as exc:  # a backfill that cannot be driven must not stop every other run
            logger.exception("backfills skipped this pass")
            report.poisoned["backfills"] = describe(exc)
        # As Airflow: backfill runs come after every other run (its queued-runs query orders them last).
        runs = sorted(self.store.active_runs(), key=lambda r: (r.run_type == DagRunType.BACKFILL,
                                                               r.logical_date or r.queued_at or _EPOCH))
        self._schedule_runs(self._runs_to_examine(runs), report, keep_reasons=True)
        report.runs_running = sum(r.state == DagRunState.RUNNING for r in runs) - len(report.runs_finished)
        last_check, check_every = self._last_parallelism_check, self.config.parallelism_check_interval
        if last_check is None or self.clock() - last_check >= check_every:
            follow_parallelism(self.store, self.config.parallelism)
            self._last_parallelism_check = self.clock()
        if self._last_wait_sweep is None or self.clock() - self._last_wait_sweep >= self.config.wait_sweep_interval:
            self.sweep_waits(runs, report)
            self._last_wait_sweep = self.clock()
        last_watch, every = self._last_watcher_sweep, self.config.watcher_sweep_interval
        if every is not None and (last_watch is None or self.clock() - last_watch >= every):
            self.sweep_watchers(report)
            self._last_watcher_sweep = self.clock()
        return report

    def _runs_to_examine(self, runs: list[DagRun]) -> list[DagRun]:
        """At most max_dagruns_per_loop_to_schedule runs, taking turns.

        Airflow examines the runs least recently decided on first (``last_scheduling_decision``), so old
        long-running runs cannot starve newer ones of their start, retries, timeouts and zombie checks. A
        scheduler here keeps no such column; it rotates instead, so every active run is examined within
        ``ceil(n / cap)`` ticks of one invocation environment.
        """
        cap = self.config.max_dagruns_per_loop_to_schedule
        if len(runs) <= cap:
            return runs
        start = self._rotation % len(runs)
        self._rotation = start + cap
        return (runs[start:] + runs[:start])[:cap]

    def sweep_waits(self, runs: list[DagRun], report: PassReport) -> None:
        """Stop executions whose try is gone and repair deferred tries whose execution is missing, failed or
        ended without resuming them (``wait_sweep``); a failing sweep is reported, never raised."""
        # lazy: cold start (wait sweeps only on the sweep path)
        from updraft.scheduling.wait_sweep import SweptWaits, sweep_waits

        if not isinstance(self.waits, SweptWaits):
            return
        try:
            sweep_waits(self.store, self.waits, runs, now=self.clock())
        except Exception as exc:
            logger.exception("deferral sweep skipped this pass")
            report.poisoned["deferral sweep"] = describe(exc)

    def sweep_watchers(self, report: PassReport) -> None:
        """Start the polled asset watchers that should run and stop the others (``asset_watchers``); a failing
        sweep is reported, never raised."""
        # lazy: cold start (watcher sweeps and the store models only on the sweep path)
        from updraft.scheduling.asset_watchers import reconcile_watchers
        from updraft.scheduling.wait_sweep import SweptWaits

        if not isinstance(self.waits, SweptWaits):
            return
        try:
            reconcile_watchers(self.store, self.waits, now=self.clock())
        except Exception as exc:
            logger.exception("asset watcher sweep skipped this pass")
            report.poisoned["asset watcher sweep"] = describe(exc)

    def schedule_run(self, dag_id: str, run_id: str, share: Share | None = None) -> PassReport:
        """The mini scheduler: evaluate and claim for one run right after one of its tasks changed state.

        Calls for a run already being scheduled in this process (worker threads finishing together) coalesce:
        they mark the run dirty and return, and the call in progress evaluates once more before it returns, so
        no state change goes unseen and a burst of completions costs a few evaluations, not one each.
        ``share``: claim only that share of the run's ready tries, applying only its instances' changes (asked by
        a pass that cut a wide claim into shares, ``claim_shares``). A call that cut the run into shares claims
        only its own in the evaluations it makes again.
        """
        key = (dag_id, run_id, share)
        with self._lock:
            if key in self._in_progress:
                self._dirty.add(key)
                return PassReport(coalesced=True)
            self._in_progress.add(key)
        report = PassReport()
        try:
            while True:
                # The run, its DAG's row and the run's waiting mark in one batch read, then its instances (one
                # Query): in this order, so that a mark read before the Query that finds nobody waiting may go.
                run, meta, _, ends = self.store.get_run_meta_and_tis(dag_id, run_id, ())
                if run is not None:
                    tis = self.store.get_run_tis(dag_id, run_id)
                    mine = [share] if share is not None else report.shared_out.get((dag_id, run_id))
                    self._schedule_runs([run], report, metas={dag_id: meta}, tis={run_id: tis},
                                        marks={run_id: (ends.waiting, share is None)},
                                        shares={(dag_id, run_id): mine} if mine is not None else None)
                with self._lock:
                    if (dag_id, run_id) in report.stale_runs:
                        report.stale_runs.discard((dag_id, run_id))
                        continue  # read it again: someone else changed it while this pass worked from a read
                    if key not in self._dirty:
                        self._in_progress.discard(key)  # under the lock: no dirty mark can slip in between
                        return report
                    self._dirty.discard(key)
        except BaseException:
            with self._lock:
                self._in_progress.discard(key)
                self._dirty.discard(key)
            raise

    def fail_lost_try(self, lost: LostTry) -> PassReport | None:
        """Fail a try its executor lost (``lost_tries``) at once, then schedule its run (the retry's wait, or the
        run's end). None when the report was about a try that had already ended or moved on: nothing written."""
        key = lost.dispatch.key
        run, ti = self.store.get_run(key.dag_id, key.run_id), self.store.get_ti(key)
        if run is None or ti is None:
            return None
        dag = self.dag(run.dag_id, run.dag_hash)
        now = self.clock()
        change = lost_try_change(dag.task_dict[key.task_id], ti, lost, now, logical_date=run.logical_date)
        if change is None:
            return None
        self._evaluate(run, now, PassReport(), [ti], evaluation=RunEvaluation(changes=[change]))
        return self.schedule_run(key.dag_id, key.run_id)

    def schedule_tasks(self, run: DagRun, meta: DagMeta | None, tis: list[TaskInstance],
                       task_ids: Collection[str], *, waiting: str | None = None,
                       handing: Handing | None = None) -> PassReport | None:
        """The mini scheduler's incremental step (``scheduling.downstream``): decide and claim only the instances
        of ``task_ids``, from ``tis`` (the items they depend on, read with the run and its DAG's row). None: a
        decision there ends an instance (skipped, upstream_failed, an EmptyOperator's success), which can decide
        more downstream: the caller schedules the whole run instead (nothing was written). ``waiting``: the run's
        waiting mark as read with ``tis``; ``handing``: an ended try's end not sent yet, sent with the claim that
        takes its slots (``claims.Handing``)."""
        evaluation = evaluate_tasks(self.dag(run.dag_id, run.dag_hash), run, tis, task_ids, now=self.clock())
        if any(change.state != TaskInstanceState.SCHEDULED for change in evaluation.changes):
            return None
        report = PassReport()
        self._schedule_runs([run], report, metas={run.dag_id: meta}, tis={run.run_id: tis},
                            evaluations={run.run_id: evaluation}, marks={run.run_id: (waiting, False)},
                            handing=handing)
        return report

    # -- run creation -----------------------------------------------------------------------------------------
    def create_due_runs(self, report: PassReport, *, dag_ids: list[str] | None = None) -> None:
        """Create the due scheduled runs of every due DAG (of ``dag_ids`` only: a wake-up's) and wake the scheduler
        when each DAG's next one falls due (``wakeups``; the tick's one index read also finds what to arm)."""
        # lazy: cold start (the worker builds the scheduler; run creation only when a run is due)
        from updraft.scheduling.run_creation import (
            horizon_of,
            last_automated_interval,
            next_run_info,
            next_runs,
            scheduled_run,
        )

        now = self.clock()
        evaluations: set[str] = set()
        budget = self.config.max_dagruns_to_create_per_loop
        active_by_dag: dict[str, set[str]] | None = None
        if dag_ids is None:
            listed = self.store.due_dags(now + 2 * self.config.tick_interval)
            dag_ids = [m.dag_id for m in listed if m.next_dagrun_run_after is None or m.next_dagrun_run_after <= now]
            arm_wakes(self, [m for m in listed if m.dag_id not in dag_ids], now=now)
        for dag_id in dag_ids:
            if budget <= 0:
                break
            meta = self.store.get_dag_meta(dag_id)  # the index is a hint; decide on the strong read
            if meta is None or meta.is_paused or not meta.is_active:
                continue
            try:
                dag = self.dag(meta.dag_id, meta.dag_hash)
            except Exception as exc:  # a DAG version that cannot be loaded: no runs for it, the others go on
                logger.exception("DAG %s skipped: its version cannot be loaded", meta.dag_id)
                report.poisoned[meta.dag_id] = describe(exc)
                continue
            if active_by_dag is None:
                active_by_dag = self._active_runs_by_dag()
            active = self._active_run_count(meta.dag_id, active_by_dag.get(meta.dag_id, set()))
            expected = meta.next_dagrun_logical_date
            horizon = horizon_of(dag, meta.timetable_horizon)
            if horizon is not None and not horizon.covers(last_automated_interval(meta)):
                self._evaluate_timetables(meta.relative_fileloc, evaluations)  # the parser's answer ran out
            for info in next_runs(dag, meta, now=now, active_runs=active, max_to_create=budget):
                run = scheduled_run(dag, meta.dag_hash, info, now=now)
                if self.store.create_run(run):
                    report.runs_created.append(run.run_id)
                    budget -= 1
                # Created by us or by a racing scheduler: either way the DAG's next run moves past this one.
                following = next_run_info(dag, info.data_interval, now=now, horizon=meta.timetable_horizon)
                if horizon is not None and horizon.running_low(info.data_interval):
                    self._evaluate_timetables(meta.relative_fileloc, evaluations)
                if not self.store.advance_next_dagrun(meta.dag_id, expected_logical_date=expected,
                                                      next_info=following, last_automated=info.data_interval):
                    break  # another scheduler advanced it first: it owns the rest of this DAG's creation
                expected = following.logical_date if following is not None else None
                wake_for_next_run(self.waits, meta.dag_id, following.run_after if following else None, now=now)

    def _evaluate_timetables(self, relative_fileloc: str, asked: set[str]) -> None:
        """Ask (once per pass) for a file's custom timetables to be evaluated from where their runs stand now.
        A lost request is asked again at the next run made or the next tick the DAG is due."""
        if relative_fileloc in asked or self.evaluate_timetables is None:
            return
        asked.add(relative_fileloc)
        try:
            self.evaluate_timetables(relative_fileloc)
        except Exception:  # the next run made asks again; the runs left in the horizon go on meanwhile
            logger.exception("asking the parser to evaluate the timetables of %s failed", relative_fileloc)

    def create_asset_triggered_runs(self, report: PassReport) -> None:
        """Runs of DAGs whose asset condition the queued events meet (:mod:`updraft.scheduling.asset_triggers`)."""
        # lazy: cold start (asset-triggered runs only on this path)
        from updraft.scheduling.asset_triggers import create_asset_triggered_runs

        for run in create_asset_triggered_runs(self.store, self.dag, now=self.clock()):
            report.runs_created.append(run.run_id)

    def _active_runs_by_dag(self) -> dict[str, set[str]]:
        by_dag: dict[str, set[str]] = {}
        for run in self.store.active_runs():
            if run.run_type != DagRunType.BACKFILL:  # as Airflow: a backfill's runs count against its own limit
                by_dag.setdefault(run.dag_id, set()).add(run.run_id)
        return by_dag

    def _active_run_count(self, dag_id: str, indexed: set[str]) -> int:
        """Queued and running runs, which Airflow counts against max_active_runs before creating another.

        Running runs are counted from the run limit (``run_slots.holding``: a strong read); queued ones from the
        active-runs index, which may miss a run another scheduler created within the last moment (the index is
        eventually consistent): at worst one run too many is created, never one too few.
        """
        return max(len(indexed), run_slots.holding(self.store, dag_runs_limit(dag_id)))

    # -- evaluation and claims --------------------------------------------------------------------------------
    def _schedule_runs(self, runs: list[DagRun], report: PassReport, *, metas: dict[str, DagMeta | None] | None = None,
                       tis: dict[str, list[TaskInstance]] | None = None, keep_reasons: bool = False,
                       evaluations: dict[str, RunEvaluation] | None = None,
                       marks: dict[str, tuple[str | None, bool]] | None = None,
                       handing: Handing | None = None,
                       shares: dict[tuple[str, str], list[Share]] | None = None) -> None:
        """``metas`` and ``tis`` are reads the caller already made (by dag_id and run_id), read no earlier;
        ``evaluations`` (by run_id) what was decided from them, when not the whole run (``schedule_tasks``);
        ``marks`` (by run_id) the run's waiting mark as read before ``tis`` and whether ``tis`` is the whole run.
        ``keep_reasons``: the tick's pass stores why each stored instance was not claimed; the mini scheduler, on
        the path from one task's end to the next one's start, leaves that to the tick (see ``ClaimPass.claim``).
        ``handing``: as ``schedule_tasks``'s. ``shares``: the shares of a run's ready tries this pass claims
        (``ClaimPass.claim``); a run where they are not the asker's has only its shares' changes applied."""
        now = self.clock()
        candidates: list[tuple[TaskInstance, DagRun]] = []
        creations: dict[TIKey, TIChange] = {}  # new instances to create by their claim (or as scheduled)
        active: dict[tuple[str, str], int] = {}  # queued or running instances per run, as evaluated
        metas = dict(metas or {})
        if unread := {run.dag_id for run in runs} - metas.keys():
            # Whether each DAG is paused: one batch read for the pass, not a read per DAG.
            metas.update(dict.fromkeys(unread) | self.store.get_dag_metas(unread))
        paused = {dag_id: meta is not None and meta.is_paused for dag_id, meta in metas.items()}
        tis = tis or {}
        for run in runs:
            if paused[run.dag_id]:
                # As Airflow: a paused DAG's runs are not examined; running tries finish, nothing new starts.
                continue
            try:
                if run.state == DagRunState.QUEUED and not self._start_run(run, now, report):
                    continue
                if run.state != DagRunState.RUNNING:
                    continue
                mine = (shares or {}).get((run.dag_id, run.run_id))
                found = self._evaluate(run, now, report, tis.get(run.run_id), creations, active,
                                       evaluation=(evaluations or {}).get(run.run_id),
                                       share=mine[0] if mine and not mine[0].asker else None)
            except Exception as exc:
                # A poison pill (its DAG version cannot be loaded, its items cannot be decided): set aside with
                # a record, so one bad run never stops the pass for the others.
                take_creations(creations, (run.dag_id, run.run_id))
                report.poisoned[f"{run.dag_id}/{run.run_id}"] = record_poisoned_run(self.store, run, exc)
                continue
            clear_poisoned_note(self.store, run)
            candidates.extend((ti, run) for ti in found)
        self.claims.claim(candidates, now, report, creations, active, keep_reasons=keep_reasons, handing=handing,
                          shares=shares)
        self._mark_waiting(runs, candidates, report, marks or {})

    def _mark_waiting(self, runs: list[DagRun], candidates: list[tuple[TaskInstance, DagRun]], report: PassReport,
                      marks: dict[str, tuple[str | None, bool]]) -> None:
        """Keep each run's waiting mark true: set when this pass refused a scheduled instance of the run (a full
        limit; not one another scheduler claimed first), so a worker ending a try there schedules the whole run
        (``scheduling.downstream``) and claims it; removed when a pass that read the whole run after the mark
        found none waiting (the mark's token is the condition: a pass that left one waiting since then set
        another). Unread (the tick): set, never cleared.

        The pass whose write set the mark where there was none looks at the run again: the mini scheduler's
        caller reads it again (``report.stale_runs``), the tick schedules it at once. A try of the run that ended
        meanwhile gave its slots back before it read the mark, found none and claimed nothing
        (``scheduling.downstream``), so without that second look the instances this pass left waiting would wait
        for the next tick although slots are free: the pass marks, then looks; an end releases, then reads the
        mark; so one of the two sees the other."""
        waiting = {(ti.dag_id, ti.run_id) for ti, _ in candidates if ti.key.label in report.not_claimed}
        looks: list[tuple[str, str]] = []
        for run in runs:
            token, whole = marks.get(run.run_id, (None, False))
            key = (run.dag_id, run.run_id)
            if key in waiting:
                if token is None and self.store.mark_waiting(run.dag_id, run.run_id):
                    if run.run_id in marks:
                        report.stale_runs.add(key)
                    else:
                        looks.append(key)
            elif token is not None and whole:
                self.store.clear_waiting(run.dag_id, run.run_id, token)
        for dag_id, run_id in looks:
            report.merge(self.schedule_run(dag_id, run_id))

    def _start_run(self, run: DagRun, now: dt.datetime, report: PassReport) -> bool:
        """queued -> running, within max_active_runs: the run takes a slot of its DAG's run limit in the same
        transaction (``run_slots``); a backfill's run holds its backfill's from its creation (by ticket, or by an
        entry of the store's limit items when created before tickets)."""
        if run.ticket is None:
            backfill = run.run_type == DagRunType.BACKFILL
            try:
                outcome = run_slots.start_holding(
                    self.store, run, None if backfill else self.dag(run.dag_id, run.dag_hash).max_active_runs,
                    now=now)
            except Contended:
                return False  # the run limit's counters were held by others on every attempt: a later pass starts it
            if isinstance(outcome, Full):
                return False  # max_active_runs reached; it starts when a run finishes
            started = isinstance(outcome, Acquired)
            if isinstance(outcome, Acquired):
                run.ticket = outcome.tickets[0].encode()
        else:
            started = self.store.set_run_state(run.dag_id, run.run_id, expected=[DagRunState.QUEUED],
                                               state=DagRunState.RUNNING, now=now)
        if started:
            report.runs_started.append(run.run_id)
            self.metrics.run_started(run, now)  # before its start date is set: its first start has none
            self.traces.run_started(run, now)
            # Our write decided it: running, started now unless it kept an earlier start (no read needed).
            run.state, run.start_date = DagRunState.RUNNING, run.start_date or now
            return True
        fresh = self.store.get_run(run.dag_id, run.run_id)
        if fresh is None or fresh.state != DagRunState.RUNNING:
            return False
        run.state, run.start_date, run.ticket = fresh.state, fresh.start_date, fresh.ticket
        return True

    def _evaluate(self, run: DagRun, now: dt.datetime, report: PassReport, tis: list[TaskInstance] | None = None,
                  creations: dict[TIKey, TIChange] | None = None,
                  active: dict[tuple[str, str], int] | None = None, *,
                  evaluation: RunEvaluation | None = None, share: Share | None = None) -> list[TaskInstance]:
        """Apply what the run's state implies (or ``evaluation``, made from ``tis``); return its scheduled
        instances (the claim candidates).

        An instance that does not exist yet and is now scheduled is not written here when ``creations`` is
        given: its claim creates it as queued in one conditional write (or, unclaimed, it is created scheduled),
        which saves a write per task on the path from one task's end to the next one's start. ``share``: only
        that share's changes are applied (``claim_shares.Share.evaluation``).
        """
        dag = self.dag(run.dag_id, run.dag_hash)
        if tis is None:
            tis = self.store.get_run_tis(run.dag_id, run.run_id)
        if evaluation is None:
            previous_tis, has_previous = previous_run_tis(self.store, dag, run)
            evaluation = evaluate_run(dag, run, tis, now=now, previous_tis=previous_tis,
                                      has_previous_run=has_previous)
        if share is not None:
            evaluation = share.evaluation(evaluation)
        by_key = {ti.key: ti for ti in tis}
        if evaluation.expanded:  # before the instances exist: an end of one finds how many there are
            self.store.record_expansions(run.dag_id, run.run_id, evaluation.expanded)
        all_applied = True
        for change in evaluation.changes:
            before = by_key.get(change.key)
            # (a cleared instance has an item without a state: it is updated, keeping its try number)
            if (creations is not None and before is None and change.expected is None
                    and change.state == TaskInstanceState.SCHEDULED):
                creations[change.key] = change
                by_key[change.key] = TaskInstance(*change.key, state=change.state, **change.fields)
                continue
            if releases(before, change.state):  # the change and the release of its ticket, one transaction
                assert before is not None
                applied = transition_releasing(self.store, before, expected=[change.expected], state=change.state,
                                               expected_try_id=change.expected_try_id, fields=change.fields)
                before = dataclasses.replace(before, ticket=None) if applied else before
            else:
                applied = self.store.apply_ti_change(change.key, expected=change.expected, state=change.state,
                                                     expected_try_id=change.expected_try_id, fields=change.fields)
            if not applied:
                all_applied = False
                continue
            if before is not None and before.state == TaskInstanceState.DEFERRED:
                # A dagrun timeout, fail_fast or the overdue-resume backstop ended its wait here.
                stop_waits(self.waits, [before])
                if change.state != TaskInstanceState.SCHEDULED:  # resumed: it keeps what it kept
                    release_ticket(self.store, before)
            if before is not None and before.state in SLOT_HOLDING_STATES:
                release_ticket(self.store, before)
                # A try failed here, not by its worker: its callbacks and email alert run on a worker instead.
                request = task_callback_request(dag.task_dict[change.key.task_id], before, change)
                if request is not None:
                    self.executor.dispatch([request])
            # Our write won, so we know the item now: no need to read the whole run again.
            by_key[change.key] = (dataclasses.replace(before, state=change.state, **change.fields)
                                  if before is not None else
                                  TaskInstance(*change.key, state=change.state, **change.fields))
            wake_for_retry(self.waits, by_key[change.key], now=now)  # a zombie's or a timeout's retry
        if not all_applied:
            # Someone else changed the run meanwhile: its state is theirs to finish; claim from a fresh read.
            if creations is not None:
                self.claims.create_scheduled(take_creations(creations, (run.dag_id, run.run_id)))
            tis = self.store.get_run_tis(run.dag_id, run.run_id)
            return [ti for ti in tis if ti.state == TaskInstanceState.SCHEDULED]
        if active is not None:
            active[(run.dag_id, run.run_id)] = sum(ti.state in SLOT_HOLDING_STATES for ti in by_key.values())
        if evaluation.run_state is not None:
            self._finish_run(run, evaluation.run_state, evaluation.run_note, now, report, tis=by_key.values())
            return []
        return [ti for ti in by_key.values() if ti.state == TaskInstanceState.SCHEDULED]

    def _finish_run(self, run: DagRun, state: DagRunState, note: str | None, now: dt.datetime,
                    report: PassReport, *, tis: Iterable[TaskInstance] = ()) -> None:
        ended = run_slots.set_state_releasing(self.store, run, expected=[DagRunState.RUNNING], state=state, now=now)
        if ended:  # the reason goes to the log and the callbacks; the run's note stays the user's, as in Airflow
            logger.info("run %s of %s ended %s%s", run.run_id, run.dag_id, state.value, f" ({note})" if note else "")
            report.runs_finished[run.run_id] = state.value
            self.metrics.run_finished(run, state, now, tis)
            self.traces.run_finished(run, state, now)
            # Only the write that ended the run sends its DAG's callbacks, so they are sent once per run end.
            request = callback_request(self.dag(run.dag_id, run.dag_hash), run, state, note, tis, end_date=now)
            if request is not None:
                self.executor.dispatch([request])
        if ended:  # what waited for its slot (a backfill's next run, a due run past max_active_runs) goes now
            run_ended(self, run)

    # -- DAG versions ----------------------------------------------------------------------------------------
    def dag(self, dag_id: str, dag_hash: str) -> SerializedDAG:
        """The serialized DAG version a run is pinned to: the store's one bounded cache of versions answers."""
        return pinned_dag(self.store, dag_id, dag_hash)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
