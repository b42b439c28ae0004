"""Two DAGs about assets, stored as the parser would: ``make_raw`` produces ``raw`` (and emits through the alias
``al``), ``use_raw`` is scheduled on ``raw & other``. Shared by the asset route tests and the official client's."""

from __future__ import annotations

from airflow.sdk import DAG, Asset, AssetAlias, task
from tests.functional.api.conftest import NOW, START
from updraft.model.parse_results import ParsedFile
from updraft.scheduling.dag_registration import register_parsed_file, set_paused
from updraft.serialization import serialize_dag

RAW = Asset(uri="s3://bucket/raw", name="raw", extra={"owner": "data"})


def seed_assets(store) -> None:
    with DAG("make_raw", schedule=None, start_date=START) as producer:
        @task(outlets=[RAW, AssetAlias("al")])
        def make():
            return None

        make()
    with DAG("use_raw", schedule=RAW & Asset("other"), start_date=START) as consumer:
        @task
        def use():
            return None

        use()
    for dag in (producer, consumer):
        doc = serialize_dag(dag, relative_fileloc=f"{dag.dag_id}.py", file_hash="h")
        register_parsed_file(store, ParsedFile(relative_path=f"{dag.dag_id}.py", file_hash="h", dags=[doc]), now=NOW)
        set_paused(store, dag.dag_id, False)
