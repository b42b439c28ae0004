"""The mini scheduler's incremental step: after a try ends, decide its downstream tasks from the few items they
depend on instead of reading and evaluating the whole run.

Airflow 2's mini scheduler did the same (``TaskInstance._schedule_downstream_tasks``: a partial DAG of the
finished task's direct downstream, its upstream rows counted by SQL; Airflow 3 leaves it to its scheduler loop,
Updraft keeps it so a hop does not wait for a tick). Reading a wide run whole after every try
made the run's own partition the hottest key of a wide fan-out (~100 RCU per task at 1,000 wide) and its
requests linear in the run. Here, for the task that ended (``plan``):

- each downstream task with at most ``DIRECT_UPSTREAMS`` upstreams is decided here from its upstreams' items,
  read with the run and its DAG's row in one BatchGetItem (a chain, a fan-out, a small join): the claim's
  conditional create guards against another scheduler having decided it first;
- a wider fan-in is *counted*: its counter of finished upstreams (``store.count_ends``, one small UpdateItem)
  says when the last upstream ended, and only that worker evaluates the whole run (unless its rule is one a
  first success decides, ``counted_ends.DECIDED_EARLY``: then it is decided from its upstreams' items);
- a leaf may have been the run's last task: the other leaves are read when few (or counted when many), and the
  whole run is evaluated once every leaf ended, which ends the run (its end is a conditional write: exactly once);
- an instance of a plain mapped task (``counted_ends``) counts its task's ended instances on the same item, where
  the scheduler recorded how many it expanded into: only the end that completes the count (or finds no count to
  compare with) reads the whole run, which decides the task's downstream (a reduce over every mapped output) and,
  for a leaf, the run's end; without it a run of N mapped instances read O(N^2) items;
- a run whose pass refused a scheduled instance (a full limit) is marked waiting (``Scheduler._mark_waiting``):
  while it is, a successful end claims the best waiting instances found through the run's waiting index
  (``scheduling.waiting_claims``: reads bounded by the slots it frees, not by the run) as it decides its
  downstream; a counted mapped instance's end there too (its count did not complete: nothing else to decide).

Anything else evaluates the whole run as before (``Scheduler.schedule_run``): a try that did not succeed (its
downstream may be skipped or upstream_failed, a cascade through the run), mapped task groups and the mapped tasks
not counted, setups and teardowns, depends_on_past, an EmptyOperator the scheduler finishes itself. Counters
count every ended try (after its fenced end won, so once per try); a count lost to a crash (or an instance the
scheduler ended, as a backstop does) delays a decision to the tick's full pass, never loses it, and a count made
twice (a cleared upstream that ran again) only makes an early look at the whole run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from updraft.model.records import TaskInstance, TIKey
from updraft.model.states import FINISHED_TI_STATES, UNFINISHED_TI_STATES, TaskInstanceState
from updraft.scheduling.counted_ends import DECIDED_EARLY, counts_mapped_ends, ends_countable
from updraft.scheduling.decisions.evaluation import finishes_in_scheduler
from updraft.scheduling.pass_report import PassReport
from updraft.scheduling.waiting_claims import HandOver, index_pays, place_of, schedule_waiting
from updraft.serialization.model import SerializedDAG, SerializedTask
from updraft.store.api import RunEnds, Store

if TYPE_CHECKING:
    from updraft.scheduling.scheduler import Scheduler

# Up to this many upstreams a downstream task's upstream items are read (1 RCU each, every time one ends);
# above it one counter write per ended upstream (1 WCU) is cheaper than reading them all each time.
DIRECT_UPSTREAMS = 4


@dataclass(frozen=True)
class Plan:
    """What the end of one task's try needs looked at, from the DAG alone."""

    whole_run: bool  # evaluate the whole run (the counters below are still counted)
    decide: tuple[str, ...] = ()  # downstream tasks decided here from their upstreams' items
    reads: tuple[str, ...] = ()  # the tasks whose instances those decisions read (the ended task's own is known)
    counted: tuple[tuple[str, int], ...] = ()  # wide fan-ins: (task, upstream tasks), counted, not read
    leaves: tuple[str, ...] = ()  # the ended task is a leaf: the other leaves, read to see whether the run ended
    leaves_counted: int = 0  # ... or, when there are many, how many leaves the run's counter waits for
    mapped: bool = False  # a counted mapped task: its ended instances are counted against its expansion


def plan(dag: SerializedDAG, task_id: str) -> Plan:
    """How the end of ``task_id``'s try is scheduled."""
    tasks = dag.task_dict
    task = tasks[task_id]
    if counts_mapped_ends(dag, task):
        return Plan(False, mapped=True)  # its downstream and leaves wait for its last instance: the whole run
    # Whether a wide fan-in's count is exact depends on it and its upstreams alone, so that each upstream's
    # end counts it, whatever else the upstream leads to.
    countable = ends_countable(dag)
    whole = not countable or _needs_whole_run(task)
    decide: list[str] = []
    reads: dict[str, None] = {}
    counted: list[tuple[str, int]] = []
    for down_id in sorted(task.downstream_task_ids):
        down = tasks[down_id]
        upstream = [tasks[u] for u in down.upstream_task_ids]
        known = not (_needs_whole_run(down) or any(_needs_whole_run(u) or finishes_in_scheduler(u)
                                                   for u in upstream))
        # A rule one upstream's success decides (one_success, ...) is decided at that end, as Airflow's loop
        # does: read, never counted to the last upstream.
        if countable and known and len(upstream) > DIRECT_UPSTREAMS and down.trigger_rule not in DECIDED_EARLY:
            counted.append((down_id, len(upstream)))
        elif known and not finishes_in_scheduler(down):
            decide.append(down_id)
            reads.update(dict.fromkeys(u.task_id for u in upstream if u.task_id != task_id))
        else:
            whole = True
    if task.downstream_task_ids:
        return Plan(whole, tuple(decide), tuple(reads), tuple(counted))
    leaves = [t for t in dag.tasks if not t.downstream_task_ids]
    if not countable or any(_needs_whole_run(t) or finishes_in_scheduler(t) for t in leaves):
        return Plan(True)
    if len(leaves) <= DIRECT_UPSTREAMS:
        return Plan(whole, leaves=tuple(t.task_id for t in leaves if t.task_id != task_id))
    return Plan(whole, leaves_counted=len(leaves))


def _needs_whole_run(task: SerializedTask) -> bool:
    """Instances not known from the DAG (mapped), or decided from more than the upstream items (the past)."""
    return bool(task.is_mapped or task.map_group_id or task.depends_on_past or task.wait_for_downstream)


def hand_over_for(store: Store, scheduler: Scheduler, dag: SerializedDAG, ti: TaskInstance) -> HandOver | None:
    """What a successful end of ``ti``'s try may send its slots to a waiting instance with
    (``waiting_claims.HandOver``), where its end would claim waiting instances and decide nothing else: its
    downstream counted or waiting for its mapped task's last instance, or a leaf (none where the run is read
    whole, or small: ``index_pays``)."""
    found = plan(dag, ti.task_id)
    if found.whole_run or found.decide or not index_pays(dag):
        return None
    return HandOver(store, scheduler, place_of(dag, ti), dag.max_active_tasks)


def schedule_downstream(store: Store, scheduler: Scheduler, dag: SerializedDAG, ended: TaskInstance, *,
                        branched: bool = False, whole_run: Callable[[], PassReport | None] | None = None,
                        hand_over: HandOver | None = None) -> PassReport | None:
    """Schedule what the end of ``ended`` (the instance in the state its try ended in) lets go, incrementally
    where ``plan`` allows; ``branched``: the try skipped tasks (a branch), which cascades through the run;
    ``whole_run`` schedules the whole run when that is needed (default: ``Scheduler.schedule_run`` here);
    ``hand_over``: what the end's hand-over found (``hand_over_for``): the pass that claimed a waiting instance
    with the end, which left nothing else to claim for it, or no waiting hit. None: nothing to do yet (only
    counters moved; a later end, or the tick, decides), or handed to ``whole_run``."""
    if whole_run is None:
        whole_run = functools.partial(scheduler.schedule_run, ended.dag_id, ended.run_id)
    found = plan(dag, ended.task_id)
    if ended.state not in FINISHED_TI_STATES:  # only a finished try counts for its downstreams and run
        return whole_run()
    counted = ([task_id for task_id, _ in found.counted] + ([None] if found.leaves_counted else [])
               + ([ended.task_id] if found.mapped else []))
    ends = store.count_ends(ended.dag_id, ended.run_id, counted) if counted else None
    if ends is not None and _complete(found, ends, ended.task_id):
        return whole_run()  # the last upstream, leaf or mapped instance to end
    if hand_over is not None and hand_over.report is not None:
        return hand_over.report  # its slots went to a waiting instance: the run cannot end, nothing else is decided
    succeeded = not branched and ended.state == TaskInstanceState.SUCCESS
    if ends is not None and ends.waiting is not None:
        # Instances wait for slots: the best of them get what this end frees.
        if not succeeded or found.whole_run:
            return whole_run()
        return _waiting(store, scheduler, dag, ended, found, ends.waiting, whole_run=whole_run,
                        listed=hand_over is None or hand_over.listed)
    if found.whole_run or not succeeded:
        return whole_run()
    if found.mapped:
        return None  # a mapped instance that was not the last to end: the last one's end reads the run
    is_leaf = not dag.task_dict[ended.task_id].downstream_task_ids
    if (is_leaf and found.leaves_counted) or not (found.decide or is_leaf):
        return None  # a counted leaf or fan-in upstream that was not the last to end
    if is_leaf and not found.leaves:
        return whole_run()  # the run's only leaf: it ended
    read = [TIKey(ended.dag_id, ended.run_id, task_id) for task_id in (*found.reads, *found.leaves)]
    run, meta, items, ends = store.get_run_meta_and_tis(ended.dag_id, ended.run_id, read)
    if run is None:
        return None
    if ends.waiting is not None:
        return _waiting(store, scheduler, dag, ended, found, ends.waiting, whole_run=whole_run,
                        listed=hand_over is None or hand_over.listed)
    if is_leaf:
        if all(key in items and items[key].state not in UNFINISHED_TI_STATES for key in read):
            return whole_run()  # every leaf ended: the whole run decides the run's end
        return None
    report = scheduler.schedule_tasks(run, meta, [ended, *items.values()], found.decide)
    if report is None or report.stale_runs:
        return whole_run()
    return report


def _waiting(store: Store, scheduler: Scheduler, dag: SerializedDAG, ended: TaskInstance, found: Plan, mark: str,
             *, whole_run: Callable[[], PassReport | None], listed: bool) -> PassReport | None:
    """The end in a run where instances wait (``mark``: the waiting mark's token it read): its downstream decided
    as planned (nothing for a counted mapped instance, whose downstream waits for its task's last instance), with
    the best waiting instances claimed (``waiting_claims``; a small run is read whole); a leaf's end decides
    nothing else there (the run cannot end while an instance waits)."""
    if not index_pays(dag):
        return whole_run()
    return schedule_waiting(store, scheduler, ended, mark, decide=found.decide,
                            reads=[TIKey(ended.dag_id, ended.run_id, task_id) for task_id in found.reads],
                            whole_run=whole_run, listed=listed)


def _complete(found: Plan, ends: RunEnds, task_id: str) -> bool:
    """Whether a counted fan-in, the run's leaves or the mapped ``task_id``'s instances have all ended (or were
    counted more: look). A mapped task with no expansion recorded (a run expanded before expansions were
    recorded) is looked at whole: no decision waits on a number that is not there."""
    return (any(ends.counts.get(down_id, 0) >= upstreams for down_id, upstreams in found.counted)
            or bool(found.leaves_counted and ends.counts.get(None, 0) >= found.leaves_counted)
            or (found.mapped and ends.counts.get(task_id, 0) >= ends.expanded.get(task_id, 0)))
