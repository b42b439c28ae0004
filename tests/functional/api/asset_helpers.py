"""Two DAGs about assets, stored as the parser would: ``make_raw`` produces ``raw`` (and emits through the alias
``al``), ``use_raw`` is scheduled on ``raw & other``; ``seed_watched_assets`` adds two assets an AssetWatcher
keeps on one SQS queue. Shared by the asset route tests and the official client's."""

from __future__ import annotations

from airflow.providers.common.messaging.triggers.msg_queue import MessageQueueTrigger
from airflow.sdk import DAG, Asset, AssetAlias, AssetWatcher, task
from tests.functional.api.conftest import NOW, START
from updraft.model.parse_results import ParsedFile
from updraft.scheduling.commands.dag_registration import register_parsed_file, set_paused
from updraft.serialization import serialize_dag

RAW = Asset(uri="s3://bucket/raw", name="raw", extra={"owner": "data"})
QUEUE_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/updraft-dev-asset-events"


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
    _register(store, producer, consumer)


def seed_watched_assets(store) -> None:
    """``on_orders`` is scheduled on ``orders | refunds``, both watched (by differently named watchers) on one queue."""
    def watched(name: str) -> Asset:
        trigger = MessageQueueTrigger(scheme="sqs", sqs_queue=QUEUE_URL)
        return Asset(name, watchers=[AssetWatcher(name=f"{name}_queue", trigger=trigger)])

    with DAG("on_orders", schedule=watched("orders") | watched("refunds"), start_date=START) as dag:
        @task
        def use():
            return None

        use()
    _register(store, dag)


def _register(store, *dags: DAG) -> None:
    for dag in dags:
        doc = serialize_dag(dag, relative_fileloc=f"{dag.dag_id}.py", file_hash="h")
        register_parsed_file(store, ParsedFile(relative_path=f"{dag.dag_id}.py", file_hash="h", dags=[doc]), now=NOW)
        set_paused(store, dag.dag_id, False)
