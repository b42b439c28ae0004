"""Assets in local mode: a producer's success triggers its consumer exactly once, and an upload under the
bucket's asset-events/ prefix triggers the DAG scheduled on that S3 asset."""

from __future__ import annotations

from pathlib import Path

from local_helpers import eventually, now, write_dag

from updraft.scheduling.triggering import trigger_dag

DAGS = """
    from datetime import datetime
    from airflow.sdk import DAG, Asset, task

    START = datetime(2024, 1, 1)
    raw = Asset("raw")
    sales = Asset(uri="s3://{bucket}/asset-events/sales", name="sales")

    with DAG("producer", schedule=None, start_date=START):
        @task(outlets=[raw])
        def make(*, outlet_events=None):
            outlet_events[raw].extra = {{"rows": 7}}

        make()

    with DAG("consumer", schedule=raw, start_date=START):
        @task
        def read(*, triggering_asset_events=None):
            return [e.extra for e in triggering_asset_events[raw]]

        read()

    with DAG("on_sales", schedule=sales, start_date=START):
        @task
        def load(*, triggering_asset_events=None):
            return [e.extra["key"] for e in triggering_asset_events[sales]]

        load()
"""


def _asset_runs(store, dag_id: str):
    return [r for r in store.list_runs(dag_id) if r.run_type == "asset_triggered"]


def test_producer_then_upload_trigger_asset_scheduled_dags(tmp_path: Path, start_system) -> None:
    from updraft.model.records import TIKey

    dags = tmp_path / "dags"
    dags.mkdir()
    system = start_system(dags, unpause_new_dags=True)
    store = system.services.store
    write_dag(dags, "assets.py", DAGS.format(bucket=system.names.bucket))
    eventually(lambda: all(store.get_dag_meta(d) and not store.get_dag_meta(d).is_paused
                           for d in ("producer", "consumer", "on_sales")))
    run = trigger_dag(store, "producer", now=now())
    assert system.services.nudge_scheduler("producer", run.run_id)
    [consumed] = eventually(lambda: [r for r in _asset_runs(store, "consumer") if r.state.value == "success"])
    assert store.get_xcom(TIKey("consumer", consumed.run_id, "read"), "return_value") == [{"rows": 7}]

    system._client("s3").put_object(Bucket=system.names.bucket, Key="asset-events/sales/day1.csv", Body=b"a,b\n")
    [loaded] = eventually(lambda: [r for r in _asset_runs(store, "on_sales") if r.state.value == "success"])
    assert store.get_xcom(TIKey("on_sales", loaded.run_id, "load"), "return_value") == ["asset-events/sales/day1.csv"]
    assert len(_asset_runs(store, "consumer")) == 1  # ticks since created nothing more
