"""The run a Lambda dispatch carries (``executors/dispatch_run.py``): exact round trips, small runs only, Fargate
and callback payloads without it, and anything malformed refused naming the field."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from updraft.executors.base import Dispatch
from updraft.executors.callback_requests import DagCallbackRequest
from updraft.executors.dispatch_run import RUN_PAYLOAD_MAX, run_from_payload, run_payload
from updraft.model.records import DagRun, TIKey
from updraft.model.states import DagRunState

SAMPLE = Path(__file__).resolve().parents[3] / "events" / "worker" / "dispatch_with_run.json"
AT = dt.datetime(2026, 11, 22, 18, tzinfo=dt.UTC)
RUN = DagRun("etl", "manual__x", "manual", "h" * 32, state=DagRunState.RUNNING, logical_date=AT,
             data_interval_start=AT, data_interval_end=AT + dt.timedelta(hours=1), run_after=AT, queued_at=AT,
             start_date=AT + dt.timedelta(seconds=1), conf={"n": 1, "nested": {"list": [1, "a", None]}}, note="hi",
             partition_key="2026-11-22", partition_date=AT, triggered_by="ui", triggering_user_name="ada",
             ti_shards=16)
KEY = TIKey("etl", "manual__x", "extract")


def _wire(payload: dict) -> dict:
    return json.loads(json.dumps(payload))


def test_a_run_round_trips_exactly():
    assert run_from_payload("etl", "manual__x", _wire(run_payload(RUN))) == RUN
    bare = DagRun("etl", "manual__x", "scheduled", "h")
    assert run_from_payload("etl", "manual__x", _wire(run_payload(bare))) == bare


def test_only_the_lambda_payload_carries_the_run():
    dispatch = Dispatch(KEY, 1, "a" * 32, run=RUN)
    assert "run" not in dispatch.to_payload()  # Fargate's (8 KB of container overrides) and the logs' form
    payload = _wire(dispatch.lambda_payload())
    assert payload == {**dispatch.to_payload(), "run": run_payload(RUN)}
    decoded = Dispatch.from_payload(payload)
    assert decoded == dispatch and decoded.run == RUN
    assert Dispatch.from_payload(_wire(dispatch.to_payload())).run is None  # the worker reads it then
    callback = DagCallbackRequest.for_run("etl", "manual__x", request_id="r", success=True, reason="ok", ti_key=None)
    assert callback.lambda_payload() == callback.to_payload()


def test_a_large_or_unencodable_run_is_left_for_the_worker_to_read():
    large = DagRun("etl", "manual__x", "manual", "h", conf={"blob": "x" * RUN_PAYLOAD_MAX})
    assert run_payload(large) is None
    assert "run" not in Dispatch(KEY, 1, "a" * 32, run=large).lambda_payload()
    assert run_payload(DagRun("etl", "manual__x", "manual", "h", conf={"when": AT})) is None  # not JSON
    assert run_payload(DagRun("etl", "manual__x", "manual", "h", start_date=AT.replace(tzinfo=None))) is None


@pytest.mark.parametrize(("run", "named"), [
    ("running", "'run' must be an object"),
    ({"run_type": "manual", "dag_hash": "h"}, "'run.state'"),
    ({"run_type": "manual", "dag_hash": "h", "state": "exploded"}, "'run.state' is not a run state"),
    ({"run_type": "manual", "dag_hash": "h", "state": "running", "start_date": "yesterday"}, "'run.start_date'"),
    ({"run_type": "manual", "dag_hash": "h", "state": "running", "start_date": "2026-11-22T18:00:00"},
     "'run.start_date'"),
    ({"run_type": "manual", "dag_hash": "h", "state": "running", "conf": []}, "'run.conf'"),
    ({"run_type": "manual", "dag_hash": "h", "state": "running", "note": 3}, "'run.note'"),
    ({"run_type": "manual", "dag_hash": "h", "state": "running", "ti_shards": 0}, "'run.ti_shards'"),
    ({"run_type": "manual", "dag_hash": "h", "state": "running", "ti_shards": "4"}, "'run.ti_shards'"),
    ({"run_type": "manual", "dag_hash": "h", "state": "running", "version": 3}, "unknown fields \\['version'\\]"),
])
def test_a_malformed_run_is_refused_naming_the_field(run, named):
    with pytest.raises(ValueError, match=named):
        Dispatch.from_payload({**Dispatch(KEY, 1, "a" * 32).to_payload(), "run": run})


def test_the_sample_dispatch_with_its_run_is_what_the_executor_sends():
    sample = json.loads(SAMPLE.read_text())
    dispatch = Dispatch.from_payload(sample)
    assert dispatch.run.dag_hash == sample["run"]["dag_hash"] and dispatch.run.state == DagRunState.RUNNING
    assert dispatch.lambda_payload() == sample
