"""A run's X-Ray trace: ids every component derives from the run alone, documents sent to the X-Ray daemon."""

from __future__ import annotations

import datetime as dt
import json
import socket

from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.traces.run_traces import RunTraces
from updraft.traces.xray import DAEMON_HEADER, DaemonLines, SegmentWriter, run_segment_id, run_trace_id

T0 = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


class Docs:
    def __init__(self) -> None:
        self.docs: list[dict] = []

    def write(self, line: str) -> None:
        self.docs.append(json.loads(line))


def test_a_run_s_trace_id_is_x_ray_s_format_and_the_same_wherever_it_is_derived() -> None:
    trace = run_trace_id("etl", "manual__1", T0)
    assert trace == run_trace_id("etl", "manual__1", T0) != run_trace_id("etl", "manual__2", T0)
    version, epoch, rest = trace.split("-")
    assert version == "1" and int(epoch, 16) == int(T0.timestamp()) and len(rest) == 24
    assert len(run_segment_id("etl", "manual__1")) == 16


def test_a_try_is_a_subsegment_of_its_run_with_its_hop_and_its_mini_scheduler() -> None:
    docs = Docs()
    traces = RunTraces(SegmentWriter(docs))
    run = DagRun("etl", "r1", run_type="manual", dag_hash="h", state=DagRunState.RUNNING, queued_at=T0,
                 start_date=T0 + dt.timedelta(seconds=1))
    ti = TaskInstance("etl", "r1", "load", state=TaskInstanceState.RUNNING, try_id="try-1", try_number=1,
                      queued_at=T0 + dt.timedelta(seconds=2), start_date=T0 + dt.timedelta(seconds=2.2))
    traces.try_started(ti, run)
    traces.try_finished(TaskInstance("etl", "r1", "load", state=TaskInstanceState.SUCCESS, try_id="try-1",
                                     try_number=1, start_date=ti.start_date), T0 + dt.timedelta(seconds=5))
    traces.try_reported("try-1", T0 + dt.timedelta(seconds=5.05))
    traces.run_finished(run, "success", T0 + dt.timedelta(seconds=6))
    hop, try_, mini, run_doc = docs.docs
    assert {d["trace_id"] for d in docs.docs} == {run_trace_id("etl", "r1", T0)}
    assert "parent_id" not in run_doc and run_doc["name"] == "etl" and run_doc["annotations"]["state"] == "success"
    assert try_["parent_id"] == run_doc["id"] and try_["type"] == "subsegment" and try_["name"] == "load"
    assert try_["annotations"] == {"task_id": "load", "try_number": 1, "map_index": -1, "state": "success"}
    assert (hop["name"], hop["parent_id"], round(hop["end_time"] - hop["start_time"], 3)) == (
        "claim to start", try_["id"], 0.2)
    assert (mini["name"], mini["parent_id"], round(mini["end_time"] - mini["start_time"], 3)) == (
        "mini scheduler", try_["id"], 0.05)


def test_a_try_whose_run_is_unknown_is_not_traced() -> None:
    docs = Docs()
    traces = RunTraces(SegmentWriter(docs))
    ti = TaskInstance("etl", "r1", "load", try_id="try-1", start_date=T0)
    traces.try_started(ti, None)
    traces.try_finished(ti, T0)
    traces.try_reported("try-1", T0)
    assert docs.docs == []


def test_documents_go_to_the_x_ray_daemon_one_datagram_each_with_its_header() -> None:
    daemon = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    daemon.bind(("127.0.0.1", 0))
    daemon.settimeout(5)
    SegmentWriter(DaemonLines(f"127.0.0.1:{daemon.getsockname()[1]}")).send({"name": "etl", "id": "1"})
    datagram = daemon.recv(65536).decode()
    assert datagram == DAEMON_HEADER + '{"name":"etl","id":"1"}'
    daemon.close()
