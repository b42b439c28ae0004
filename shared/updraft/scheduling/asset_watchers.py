"""Which polled asset watchers run, as Airflow's triggerer runs a watcher's trigger for as long as a DAG scheduled
on its asset is active: one Step Functions execution per watcher (``model.asset_watches``), whose checks
(``updraft.runtime.asset_watch``) turn the trigger's events into asset events.

A watcher is wanted while its asset holds it (the DAG file still declares that trigger) and some active, unpaused
DAG is scheduled on the asset. ``reconcile_watchers`` makes the running executions match: it starts a wanted
watcher that has none (a new DAG, an unpause, a changed trigger, a check that failed) and stops an execution no
watcher wants (a pause, a deleted DAG, a changed trigger; each check also ends its own execution then, so a stop
that is lost costs nothing). The scheduler runs it on its own throttle (``SchedulerConfig.watcher_sweep_interval``).

What it costs: one scan of the assets, one DAG row read per consumer of a watched asset, one ListExecutions per
100 running executions, and one DescribeExecution per generation of a watcher being started.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from typing import TYPE_CHECKING

from updraft.model.asset_watches import POLL_SOURCE, PolledWatch, digest_of, is_watch_execution
from updraft.scheduling.wait_sweep import SweptWaits
from updraft.store.assets import AssetRecord

if TYPE_CHECKING:
    from updraft.store.api import Store

log = logging.getLogger(__name__)


@dataclasses.dataclass
class WatchReport:
    started: list[str] = dataclasses.field(default_factory=list)  # executions started
    stopped: list[str] = dataclasses.field(default_factory=list)  # executions no watcher wants


def polled_watches(asset: AssetRecord) -> list[PolledWatch]:
    """The asset's watchers whose triggers Updraft polls (the SQS ones AWS delivers)."""
    return [PolledWatch(asset_id=asset.asset_id, asset_name=asset.name, uri=asset.uri, group=asset.group,
                        name=str(w["name"]), classpath=str(w["classpath"]), kwargs=dict(w.get("kwargs") or {}))
            for w in asset.watchers if w.get("source") == POLL_SOURCE]


def live_consumer(store: Store, asset: AssetRecord) -> str | None:
    """An active, unpaused DAG scheduled on the asset (None: no one listens, so nothing watches)."""
    for dag_id in sorted(asset.consumers):
        meta = store.get_dag_meta(dag_id)
        if meta is not None and meta.is_active and not meta.is_paused:
            return dag_id
    return None


def still_wanted(store: Store, watch: PolledWatch) -> str | None:
    """The live consumer for which ``watch`` still runs, or None: its execution must end."""
    asset = store.get_asset(watch.asset_id)
    if asset is None or watch not in polled_watches(asset):
        return None
    return live_consumer(store, asset)


def wanted_watches(store: Store) -> dict[str, PolledWatch]:
    """Every watcher that should be running, by its digest."""
    wanted: dict[str, PolledWatch] = {}
    for asset in store.list_assets():
        watches = polled_watches(asset)
        if watches and live_consumer(store, asset) is not None:
            wanted.update((w.digest, w) for w in watches)
    return wanted


def next_generation(waits: SweptWaits, watch: PolledWatch) -> int | None:
    """The first generation whose name Step Functions does not hold; None when one is running (started since the
    executions were listed: nothing to start)."""
    generation = 1
    while (status := waits.execution_status(watch.execution_name(generation))) is not None:
        if status == "RUNNING":
            return None
        generation += 1
    return generation


def reconcile_watchers(store: Store, waits: SweptWaits, *, now: dt.datetime) -> WatchReport:
    """Start the wanted watchers without an execution, stop executions no watcher wants (one per watcher)."""
    report = WatchReport()
    running = [name for name, _ in waits.running_executions() if is_watch_execution(name)]
    wanted = wanted_watches(store)
    kept: set[str] = set()
    for name in sorted(running):
        digest = digest_of(name)
        if digest in wanted and digest not in kept:
            kept.add(digest)
            continue
        waits.stop(name)
        report.stopped.append(name)
    for digest, watch in wanted.items():
        if digest in kept:
            continue
        generation = next_generation(waits, watch)
        if generation is not None:
            waits.start(watch.execution_name(generation), watch.to_input(generation, now))
            report.started.append(watch.execution_name(generation))
    if report.started or report.stopped:
        log.info("asset watchers reconciled: %s", report)
    return report
