"""Assets in local mode: an upload under the bucket's asset-events/ prefix triggers the DAG scheduled on that S3
asset, once. (A producer triggering its consumer, with schedulers racing, is tested on the moto harness:
tests/functional/assets.)"""

from __future__ import annotations

from pathlib import Path

from local_helpers import eventually, write_dag

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


def _asset_runs(store, dag_id: str):
    return [r for r in store.list_runs(dag_id) if r.run_type == "asset_triggered"]


def test_an_upload_triggers_the_asset_scheduled_dag(tmp_path: Path, start_system) -> None:
    from updraft.model.records import TIKey

    dags = tmp_path / "dags"
    dags.mkdir()
    system = start_system(dags, unpause_new_dags=True)
    store = system.services.store
    write_dag(dags, "assets.py", DAGS.format(bucket=system.names.bucket))
    eventually(lambda: store.get_dag_meta("on_sales") and not store.get_dag_meta("on_sales").is_paused)
    system._client("s3").put_object(Bucket=system.names.bucket, Key="asset-events/sales/day1.csv", Body=b"a,b\n")
    [loaded] = eventually(lambda: [r for r in _asset_runs(store, "on_sales") if r.state.value == "success"])
    assert store.get_xcom(TIKey("on_sales", loaded.run_id, "load"), "return_value") == ["asset-events/sales/day1.csv"]
    for _ in range(2):
        system._tick()  # ticks since create nothing more
    assert len(_asset_runs(store, "on_sales")) == 1
