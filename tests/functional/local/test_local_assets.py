"""Assets in local mode (updraft local's own system, not the moto harness; issue 17's "done when"): an upload under
the bucket's asset-events/ prefix triggers the DAG scheduled on that S3 asset, once; a producer DAG's success
triggers its consumer exactly once while four schedulers race. One system serves both tests (its start is most
of their time)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from local_helpers import eventually, now, quick_system

from updraft.local.system import LocalSystem
from updraft.scheduling.commands.triggering import trigger_dag

pytestmark = pytest.mark.slow

SCHEDULERS = 4
WAIT_S = 60.0  # a try in a fresh local worker takes ~8 s on a loaded 2-core machine

DAGS = """
    from datetime import datetime
    from airflow.sdk import DAG, Asset, task

    START = datetime(2024, 1, 1)
    sales = Asset(uri="s3://{bucket}/asset-events/sales", name="sales")

    with DAG("on_sales", schedule=sales, start_date=START):
        @task
        def load(*, triggering_asset_events=None):
            return [e.extra["key"] for e in triggering_asset_events[sales]]

        load()
"""

PIPELINE = """
    from datetime import datetime
    from airflow.sdk import DAG, Asset, task

    START = datetime(2024, 1, 1)
    orders = Asset("orders")

    with DAG("producer", schedule=None, start_date=START):
        @task(outlets=[orders])
        def write():
            return "written"

        write()

    with DAG("consumer", schedule=orders, start_date=START):
        @task
        def read(*, triggering_asset_events=None):
            return [e.asset.name for e in triggering_asset_events[orders]]

        read()
"""


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with quick_system(tmp_path_factory.mktemp("local_assets"), lambda started: {
            "assets.py": DAGS.format(bucket=started.names.bucket), "pipeline.py": PIPELINE}) as started:
        yield started


def _asset_runs(store, dag_id: str):
    return [r for r in store.list_runs(dag_id) if r.run_type == "asset_triggered"]


def _unpaused(store, *dag_ids: str) -> bool:
    return all(store.get_dag_meta(d) and not store.get_dag_meta(d).is_paused for d in dag_ids)


def test_an_upload_triggers_the_asset_scheduled_dag(system: LocalSystem) -> None:
    from updraft.model.records import TIKey

    store = system.services.store
    eventually(lambda: _unpaused(store, "on_sales"))
    system._client("s3").put_object(Bucket=system.names.bucket, Key="asset-events/sales/day1.csv", Body=b"a,b\n")
    [loaded] = eventually(lambda: [r for r in _asset_runs(store, "on_sales") if r.state.value == "success"],
                          timeout=WAIT_S)
    assert store.get_xcom(TIKey("on_sales", loaded.run_id, "load"), "return_value") == ["asset-events/sales/day1.csv"]
    for _ in range(2):
        system._tick()  # ticks since create nothing more
    assert len(_asset_runs(store, "on_sales")) == 1


def test_a_producer_success_triggers_its_consumer_once_with_four_schedulers_racing(system: LocalSystem) -> None:
    """Four threads call the scheduler handler as EventBridge ticks would, beside the system's own ticks and the
    mini scheduler's nudges; the consumer's asset-triggered run is created once."""
    from updraft.model.records import TIKey

    store = system.services.store
    eventually(lambda: _unpaused(store, "producer", "consumer"))
    stop = threading.Event()
    errors: list[BaseException] = []

    def race() -> None:
        try:
            while not stop.wait(0.05):  # moto serves one request at a time: a tick every 50 ms per scheduler
                system._tick()
        except BaseException as exc:  # the test fails on any scheduler error
            errors.append(exc)

    racers = [threading.Thread(target=race) for _ in range(SCHEDULERS)]
    for racer in racers:
        racer.start()
    try:
        produced = trigger_dag(store, "producer", now=now())
        eventually(lambda: store.get_run("producer", produced.run_id).state.value == "success", timeout=WAIT_S)
        [consumed] = eventually(lambda: [r for r in store.list_runs("consumer") if r.state.value == "success"],
                          timeout=WAIT_S)
        for _ in range(3):  # more ticks past the consumer's end create nothing more
            system._tick()
    finally:
        stop.set()
        for racer in racers:
            racer.join()
    assert not errors, errors
    assert [(r.run_id, r.run_type) for r in store.list_runs("consumer")] == [(consumed.run_id, "asset_triggered")]
    assert store.get_xcom(TIKey("consumer", consumed.run_id, "read"), "return_value") == ["orders"]
    assert [e.source_dag_id for e in store.get_triggering_events("consumer", consumed.run_id)] == ["producer"]
