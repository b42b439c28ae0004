"""Airflow's ``AssetWatcher`` where AWS already delivers the events (issue 17): any message on the environment's
asset-events SQS queue watched by ``MessageQueueTrigger`` becomes an event of the watching asset (Airflow's watcher
extra) and queues its consumer, once; what a watcher holds is stored with the asset. Triggers Updraft is never
told about are refused in the DAG file, naming them. (Uploads need no watcher: tests/functional/local.)"""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from moto import mock_aws

from airflow.providers.common.messaging.triggers.msg_queue import MessageQueueTrigger
from airflow.sdk import DAG, Asset, AssetWatcher, task
from tests.functional.scheduling.harness import START, make_store, store_dags
from updraft.scheduling.asset_sources import handle_source_event
from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.store.assets import asset_id_of

BUCKET = "updraft-dev-123456789012-us-east-1"
QUEUE_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/updraft-dev-asset-events"
QUEUE_ARN = "arn:aws:sqs:us-east-1:123456789012:updraft-dev-asset-events"
NOW = START + dt.timedelta(days=1)


def _sqs(message_id: str, body: str, queue_arn: str = QUEUE_ARN) -> dict:
    return {"Records": [{"messageId": message_id, "body": body, "eventSource": "aws:sqs",
                         "eventSourceARN": queue_arn, "attributes": {"SentTimestamp": "1732296600000"}}]}


@pytest.fixture
def store():
    orders = Asset("orders", watchers=[AssetWatcher(name="orders_queue", trigger=MessageQueueTrigger(
        scheme="sqs", sqs_queue=QUEUE_URL))])
    with mock_aws():
        made = make_store()
        dags = []
        for asset in (orders, Asset("plain")):
            with DAG(f"on_{asset.name}", schedule=asset, start_date=START) as dag:
                @task
                def noop():
                    return None

                noop()
            dags.append(dag)
        store_dags(made, *dags, now=NOW)
        yield made


def test_every_message_on_the_watched_queue_is_an_event_of_the_watching_asset(store):
    [orders] = [a for a in store.list_assets() if a.name == "orders"]
    assert orders.watchers == [{"name": "orders_queue", "source": "sqs", "queue": "updraft-dev-asset-events"}]

    # any message on the watched queue is an event, whatever its body; a redelivery records nothing new
    for _ in range(2):
        outcome = handle_source_event(store, _sqs("m-1", "not json at all"), bucket=BUCKET, now=NOW)
    [event] = store.list_asset_events(asset_id_of("orders"))
    assert event.extra == {"from_trigger": True, "payload": {"status": "success", "message_batch": [
        {"MessageId": "m-1", "Body": "not json at all", "Attributes": {"SentTimestamp": "1732296600000"},
         "MessageAttributes": {}}]}}
    assert outcome.consumers == {"on_orders"}
    # a message on another queue still has to name its asset (the configured-queue rule)
    with pytest.raises(json.JSONDecodeError):
        handle_source_event(store, _sqs("m-2", "plain", "arn:aws:sqs:us-east-1:1:other"), bucket=BUCKET, now=NOW)


@pytest.mark.parametrize(("make", "named"), [
    (lambda: MessageQueueTrigger(scheme="kafka", topics=["t"]), "MessageQueueTrigger(scheme='kafka'"),
    (lambda: MessageQueueTrigger(queue="redis+pubsub://localhost:6379?channels=c"), "MessageQueueTrigger(scheme=None"),
    (lambda: MessageQueueTrigger(scheme="sqs", sqs_queue=QUEUE_URL, message_filtering="jsonpath"),
     "MessageQueueTrigger(message_filtering=...)"),
])
def test_watches_updraft_is_never_told_about_are_refused_naming_them(make, named):
    with pytest.raises(UnsupportedFeatureError, match=re.escape(named)):
        make()


def test_triggers_that_are_not_event_triggers_are_refused_in_the_watcher():
    from airflow.triggers.base import BaseTrigger
    from updraft.triggers.file import FileTrigger

    with pytest.raises(UnsupportedFeatureError, match="FileTrigger in an AssetWatcher"):
        AssetWatcher(name="w", trigger=FileTrigger(filepath="/tmp/x"))
    assert issubclass(FileTrigger, BaseTrigger)
    # file watchers are polled (tests/functional/deferrals/test_polled_asset_watchers.py)
    scope: dict = {}
    exec("from airflow.providers.standard.triggers.file import FileDeleteTrigger", scope)
    watcher = AssetWatcher(name="w", trigger=scope["FileDeleteTrigger"](filepath="/tmp/x"))
    assert watcher.watch == {"source": "poll", "classpath": "airflow.providers.standard.triggers.file.FileDeleteTrigger",
                             "kwargs": {"filepath": "/tmp/x", "poke_interval": 5.0}}
    with pytest.raises(UnsupportedFeatureError, match="MessageQueueTrigger"):
        exec("from airflow.providers.amazon.aws.triggers.sqs import SqsSensorTrigger", {})
