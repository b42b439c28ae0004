"""Local mode's Lambda and ECS clients and the socket that answers them."""

from __future__ import annotations

import json
import threading

import pytest

from updraft.executors.local_compute import ECS_RUN_TASK, LAMBDA_INVOKE, LocalComputeError, local_client
from updraft.local.compute_server import ComputeServer


@pytest.fixture
def server():
    seen: list[dict] = []
    lock = threading.Lock()

    def record(message: dict) -> dict:
        with lock:
            seen.append(message)
        if message["op"] == ECS_RUN_TASK:
            return {"tasks": [{"taskArn": f"arn:task/{message['task_id']}"}], "failures": []}
        return {"StatusCode": 202}

    srv = ComputeServer({LAMBDA_INVOKE: record, ECS_RUN_TASK: record})
    yield srv, seen
    srv.close()


def test_boto3_shaped_calls_reach_local_mode_whole(server):
    srv, seen = server
    lam, ecs = local_client("lambda", srv.address), local_client("ecs", srv.address)
    assert lam.invoke(FunctionName="updraft-local-worker", InvocationType="Event",
                      Payload=json.dumps({"try_id": "t"}).encode()) == {"StatusCode": 202}
    response = ecs.run_task(cluster="c", overrides={"containerOverrides": [{"environment": []}]})
    assert response["failures"] == [] and response["tasks"][0]["taskArn"].startswith("arn:task/")
    assert seen[0] == {"op": LAMBDA_INVOKE, "function": "updraft-local-worker", "payload": {"try_id": "t"}}
    assert seen[1]["request"]["cluster"] == "c"


def test_many_invokes_at_once_are_all_answered(server):
    srv, seen = server
    lam = local_client("lambda", srv.address)
    failures: list[str] = []

    def invoke(i: int) -> None:
        try:
            lam.invoke(FunctionName="f", InvocationType="Event", Payload=json.dumps({"i": i}))
        except Exception as exc:
            failures.append(repr(exc))

    threads = [threading.Thread(target=invoke, args=(i,)) for i in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and sorted(m["payload"]["i"] for m in seen) == list(range(64))


def test_what_local_mode_does_not_play_is_a_clear_error(server, tmp_path):
    srv, _ = server
    with pytest.raises(LocalComputeError, match="asynchronous invokes only"):
        local_client("lambda", srv.address).invoke(FunctionName="f", InvocationType="RequestResponse")
    with pytest.raises(ValueError, match="not 's3'"):
        local_client("s3", srv.address)
    with pytest.raises(LocalComputeError, match="did not answer"):
        local_client("lambda", str(tmp_path / "gone.sock")).invoke(FunctionName="f", InvocationType="Event")
