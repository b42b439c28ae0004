"""The trigger-check Lambda handler with its sample event on moto: a deferred try's FileTrigger is looked at once
per invoke; the answer is the next state of the deferral loop, and a fired event is written on the try's record."""

from __future__ import annotations

import json
from pathlib import Path

from moto import mock_aws

from tests.functional.lambda_helpers import lambda_context
from updraft.model.deferrals import ResumeRequest
from updraft.model.states import TaskInstanceState
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

EVENT = Path(__file__).resolve().parents[2] / "events" / "trigger_check" / "poll.json"
TABLE, REGION = "updraft-check-test", "us-east-1"


def test_the_check_waits_then_fires_and_records_the_event(monkeypatch, tmp_path):
    for name, value in {"AWS_REGION": REGION, "UPDRAFT_TABLE": TABLE}.items():
        monkeypatch.setenv(name, value)
    event = json.loads(EVENT.read_text())
    request = ResumeRequest.from_payload(event["resume"])
    assert request is not None
    with mock_aws():
        config = StoreConfig(table_name=TABLE, region=REGION)
        create_table(config)
        store = DynamoStore(config)
        trigger = {"classpath": "airflow.providers.standard.triggers.file.FileTrigger", "kind": "poll",
                   "kwargs": {"filepath": str(tmp_path / "*.csv"), "recursive": False, "poke_interval": 45.0},
                   "times_out": False, "event": None, "timeout_at": None}
        assert store.apply_ti_change(request.key, expected=None, state=TaskInstanceState.DEFERRED,
                                     fields={"try_id": request.try_id, "try_number": 1, "trigger": trigger})
        from functions.trigger_check import handler

        monkeypatch.setattr("updraft.services._shared", None)
        context = lambda_context("updraft-trigger-check")
        waiting = handler.handler(event, context)
        assert (waiting["outcome"], waiting["poll_seconds"], waiting["resume"]) == ("waiting", 45, event["resume"])
        (tmp_path / "sales.csv").write_text("1\n")
        fired = handler.handler(waiting, context)
        assert fired["outcome"] == "fired"
        assert store.get_ti(request.key).trigger["event"] is True
        other = {**event, "resume": {**event["resume"], "try_id": "another-try"}}
        assert handler.handler(other, context)["outcome"] == "gone"  # a superseded try is not looked at
