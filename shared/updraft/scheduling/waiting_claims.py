"""A try's end in a run where instances wait for slots: claim the best waiting ones without reading the
run.

A run is marked waiting (``Scheduler._mark_waiting``) when a pass refused one of its scheduled instances for a
full limit. The slot a try's end frees may be what such an instance needs; reading the whole run to find it made
every end of a run of N instances at a limit far below N cost O(N) reads (O(N^2) per run). Airflow finds the
next instances with an indexed query (``state = scheduled ORDER BY priority_weight DESC, ..., map_index LIMIT
n``); here the run's sparse waiting index (``store.waiting``) does: one Query of a few index keys in claim order,
then one strongly consistent BatchGetItem of those instances with the run, its DAG's row and the ENDS item (the
index is eventually consistent: a hit claimed meanwhile is dropped, and a stale hit that slips through only
costs a refused conditional write). The best of them go through the scheduler's normal claim path
(``Scheduler.schedule_tasks``), as many as the slots the end frees can take, so every limit and the claim
protocol's invariants hold as in any pass. A try that was itself claimed from the waiting instances does this
before its end is written, and sends its end with the claim (``HandOver``: the slots move to the next instance
with no counter written, decision 0033); ``schedule_waiting`` is the path of every other end.

The whole run is evaluated instead when nothing waiting is found (the mark is stale, or the index has not caught
up: that pass claims what waits), and in a small run (``index_pays``), where reading the run whole costs no more
than the index and the hits. Ends that free slots together find nothing together (a wide run's last waiting
instance claimed), and each read the run whole; only one does (``_look_once``): the end whose conditional clear
of the mark lands. The others freed their slots before that clear (each freed its slots, then read the mark it
tried to clear), so that end's read, which follows its clear, sees them; if its pass still leaves instances
waiting, the pass marks the run again and looks again (``Scheduler._mark_waiting``). Limits other than the
ended try's (another DAG waits on the same pool) are the tick's business, as they are for the whole-run pass of
one run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from updraft import limits
from updraft.model.records import TaskInstance, TIKey
from updraft.model.states import TaskInstanceState
from updraft.scheduling.claims import Handing, needs_as_held
from updraft.scheduling.decisions.ordering import claim_order
from updraft.scheduling.holding import held_limit_ids
from updraft.scheduling.pass_report import PassReport
from updraft.scheduling.try_lifecycle import TryEnd
from updraft.serialization.model import SerializedDAG
from updraft.store.api import Store

if TYPE_CHECKING:
    from updraft.scheduling.scheduler import Scheduler

logger = logging.getLogger(__name__)

# Index entries read beyond the instances an end can start: hits claimed meanwhile (the index lags the claims)
# and claims lost to a concurrent end are made up from these, not from a read of the run.
SPARE_HITS = 3

# Of the index entries a hand-over lists (keys only, one Query: as many as the run may run at once, a wave of
# tries that end together, up to ``HAND_OVER_HITS``), the hits it reads and tries beside the first, from its own
# place on (``hand_over_window``). Measured, local fan-out 1 -> 200 -> 1 at 32: listing the first 4 or 8 and
# trying them all, each hand-over lost 2-4 claims to the others of its wave; listing 32, 0.5.
HAND_OVER_PICKS = 3
HAND_OVER_HITS = 100

# Up to this many instances (a DAG of no more tasks, none mapped) the run's strongly consistent Query costs no more
# than the index's Query and the hits' batch read: ~550-byte instances, 8 to a 4 KB read unit (measured: the
# pool32 scenario's 2-task runs paid one more request per waiting end through the index, and no fewer units).
SMALL_RUN = 32


def index_pays(dag: SerializedDAG) -> bool:
    """Whether a run of ``dag`` may hold more instances than reading it whole costs (``SMALL_RUN``)."""
    return len(dag.tasks) > SMALL_RUN or any(t.is_mapped or t.map_group_id for t in dag.tasks)


def schedule_waiting(store: Store, scheduler: Scheduler, ended: TaskInstance, mark: str, *,
                     decide: Sequence[str] = (), reads: Sequence[TIKey] = (),
                     whole_run: Callable[[], PassReport | None], listed: bool = True) -> PassReport | None:
    """After ``ended``'s successful try in a run it read marked waiting (``mark``, the mark's token): claim the
    run's best waiting instances and decide ``decide`` (its downstream tasks decided from their upstreams' items,
    ``reads``) in one pass; ``whole_run`` when the run is no longer marked or nothing waiting is found (once for
    the ends that find nothing under one mark). The index is read first (keys only, eventually consistent:
    cheaper than the mark), so an end where it finds nothing reads no more; else one batch reads the hits with
    the run, its DAG's row, the mark and ``reads``. ``listed`` False: the end's hand-over listed the index just
    before the end and found it empty (``HandOver.listed``), so it is not listed again."""
    wanted = max(1, ended.pool_slots)  # one try's end frees one slot of each limit, its pool's pool_slots
    hits = store.waiting_tis(ended.dag_id, ended.run_id, limit=wanted + SPARE_HITS) if listed else []
    if not hits:
        return _look_once(store, ended, mark, whole_run)  # nothing waits, or the index has not caught up
    run, meta, items, ends = store.get_run_meta_and_tis(ended.dag_id, ended.run_id, [*reads, *hits])
    if run is None:
        return None
    waiting = [items[key] for key in hits if key in items and items[key].state == TaskInstanceState.SCHEDULED]
    if ends.waiting is None or not waiting:
        return _look_once(store, ended, ends.waiting, whole_run)  # nothing known to wait, or the mark is stale
    upstream = [items[key] for key in reads if key in items]
    queue = claim_order(waiting, [run])
    freed = held_limit_ids(ended)
    report: PassReport | None = None
    while queue:
        batch, queue = queue[:wanted], queue[wanted:]
        tis = [ended, *upstream, *batch] if report is None else [ended, *batch]
        step = scheduler.schedule_tasks(run, meta, tis, decide if report is None else (), waiting=ends.waiting)
        if step is None or step.stale_runs:
            return whole_run()
        if report is None:
            report = step
        else:
            report.merge(step)
        # A claim lost to a concurrent end (neither dispatched nor refused), or refused by no limit this end freed
        # (a full named pool it did not hold, a pool that does not exist): the next hit takes its place, as
        # Airflow's loop passes over a task its pool holds back. Refused by a limit it freed: that is full again.
        dispatched = {d.key for d in step.dispatched}
        elsewhere = not (step.full_limits & freed)
        wanted = sum(ti.key not in dispatched and (elsewhere or ti.key.label not in step.not_claimed)
                     for ti in batch)
        if not wanted:
            break
    return report


class HandOver:
    """A successful try's end in a run where instances wait (``try_lifecycle.finish_try``'s ``hand_over``):
    sent with the claim of a waiting instance, which takes the slots the try held, in one transaction that writes
    no limit counter (``limits.hand_over``), instead of a release and a claim that each write every counter the
    try held: those are the counters every claim and release of the busy limits writes.

    Before the end is written it finds that instance as an end does after (``schedule_waiting``), through the
    waiting index: it lists as many hits as the run may run at once (``wave``: tries that end together), reads
    the first and a few from its own ``place`` on (``hand_over_window``) in one strongly consistent batch with the
    run, its DAG's row, the mark and the counters the try's ticket holds slots on, and tries them in claim order,
    its own picks first among those Airflow's order cannot tell apart (``hand_over_order``); one another end took
    meanwhile (nothing lands) sends it to the next. It hands over only to an instance read scheduled, the
    instance needs exactly what the try held (``claims.needs_as_held``: a mapped task's next instance, a
    fan-out's next task) and no shard of the ticket is over its share (``limits.over_share``: a shrunk limit's
    excess is given back, not passed on). The claim goes through the scheduler's claim path
    (``Scheduler.schedule_tasks``), so every check of a claim holds as in any pass. Otherwise the end is not sent
    here (``None``: ``finish_try`` releases, and the mini scheduler claims after it as it did). ``report``: the
    pass that claimed with the end, when it did (the mini scheduler then has nothing left to claim for this
    end); ``listed`` False, its listing of the waiting index came back empty (the mini scheduler does not list
    it again)."""

    def __init__(self, store: Store, scheduler: Scheduler, place: int, wave: int) -> None:
        self.store = store
        self.scheduler = scheduler
        self.place = place
        self.hits = max(HAND_OVER_PICKS + 1, min(wave, HAND_OVER_HITS))
        self.report: PassReport | None = None
        self.listed = True  # False: its listing of the waiting index came back empty

    def __call__(self, end: TryEnd) -> bool | None:
        if end.ticket is None:
            return None
        handing = Handing(end.holder(self.store), end.ticket)
        try:
            self.report = self._claim_with(end.ended, handing)
        except Exception:
            if handing.landed is not None:
                raise  # the end was sent: its caller fails, as after any end (its dispatch is delivered again)
            logger.exception("%s: the claim to hand its slots to failed; the end goes with its release",
                             end.ti.key.label)
            return None
        return handing.landed

    def _claim_with(self, ended: TaskInstance, handing: Handing) -> PassReport | None:
        """The pass claiming a waiting instance with ``handing`` (None: nothing handed)."""
        hits = self.store.waiting_tis(ended.dag_id, ended.run_id, limit=self.hits)
        if not hits:
            self.listed = False
            return None
        window = hand_over_window(hits, self.place)
        read = self.store.read_run(ended.dag_id, ended.run_id, window, counters=limits.shard_ids(handing.ticket))
        waiting = [read.tis[key] for key in window
                   if key in read.tis and read.tis[key].state == TaskInstanceState.SCHEDULED]
        # The run's waiting mark is not asked for: it tells an end that frees slots to look (a pass that leaves
        # instances waiting and an end that frees slots must see each other); a hand-over frees none, and an
        # instance in the index read scheduled waits, whether the pass that refused it has marked the run yet.
        if read.run is None or not waiting or limits.over_share(handing.ticket, read.counters):
            return None
        dag = self.scheduler.dag(read.run.dag_id, read.run.dag_hash)
        step: PassReport | None = None
        for best in hand_over_order(claim_order(waiting, [read.run]), window):
            task = dag.task_dict.get(best.task_id)
            if task is None or not needs_as_held(best, task, dag, handing.ticket):
                break  # claimed after the release, as any other end's
            handing.lost = False
            step = self.scheduler.schedule_tasks(read.run, read.meta, [ended, best], (),
                                                 waiting=read.ends.waiting, handing=handing)
            if not handing.lost:
                break  # sent (landed, or the end refused), or not claimed for a reason the next would share
            # Claimed meanwhile by an end that read the same hits: the next one.
        return step if handing.landed else None


def hand_over_window(hits: list[TIKey], place: int) -> list[TIKey]:
    """The hits (listed in the index's claim order) a hand-over reads, in the order it tries them among ties:
    ``HAND_OVER_PICKS`` from the ended try's ``place`` on (round the list), then the first. Tries that end
    together were mostly claimed together, in claim order: their places are neighbours, so they read and try
    first different hits."""
    start = place % len(hits)
    return list(dict.fromkeys([*(hits[(start + i) % len(hits)] for i in range(HAND_OVER_PICKS)), hits[0]]))


def hand_over_order(ordered: list[TaskInstance], window: list[TIKey]) -> list[TaskInstance]:
    """The instances read (``ordered``: claim order) in the order a hand-over tries them: those Airflow's order
    cannot tell from the first (priority weight and map index; one run, one date) in the order of ``window``,
    then the rest in claim order. Updraft's last key, the task id, is no order of Airflow's; a mapped task's
    instances, which differ in map index, stay in order."""
    first = ordered[0]
    ties = [ti for ti in ordered if (ti.priority_weight, ti.map_index) == (first.priority_weight, first.map_index)]
    position = {key: index for index, key in enumerate(window)}
    return sorted(ties, key=lambda ti: position.get(ti.key, len(position))) + ordered[len(ties):]


def place_of(dag: SerializedDAG, ti: TaskInstance) -> int:
    """A try's place among its run's instances in claim order, as far as the DAG says: its map index, or its
    task's among the DAG's task ids (``hand_over_window``)."""
    return ti.map_index if ti.map_index >= 0 else sum(task_id < ti.task_id for task_id in dag.task_dict)


def _look_once(store: Store, ended: TaskInstance, mark: str | None,
               whole_run: Callable[[], PassReport | None]) -> PassReport | None:
    """The whole run, read by one of the ends that found nothing waiting under the mark ``mark``: the one whose
    clear of it lands (None: no mark known, read it)."""
    if mark is not None and not store.clear_waiting(ended.dag_id, ended.run_id, mark):
        return None  # another end cleared it, or a pass marked again: either reads the run after this end's release
    return whole_run()
