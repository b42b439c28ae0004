"""CloudWatchLogSink against moto's CloudWatch Logs: a stream per try, batches within PutLogEvents' limits."""

from __future__ import annotations

import re

import boto3
import pytest
from moto import mock_aws

from updraft.model.records import TIKey
from updraft.runtime.logs import CloudWatchLogSink

GROUP = "updraft-test-task-logs"
KEY = TIKey("etl", "manual__2024-01-01T00:00:00+00:00", "extract")
STREAM_NAME = re.compile(r"^[^:*]{1,512}$")  # CloudWatch's rule for log stream names


@pytest.fixture
def logs():
    with mock_aws():
        client = boto3.client("logs", region_name="us-east-1")
        client.create_log_group(logGroupName=GROUP)
        yield client


def _streams(client) -> list[str]:
    return [s["logStreamName"] for s in client.describe_log_streams(logGroupName=GROUP)["logStreams"]]


def _record_puts(client) -> list[list[dict]]:
    calls: list[list[dict]] = []
    client.meta.events.register("provide-client-params.logs.PutLogEvents",
                                lambda params, **_: calls.append(params["logEvents"]))
    return calls


def test_round_trip_of_a_multi_line_unicode_log(logs) -> None:
    sink = CloudWatchLogSink(logs, GROUP)
    text = ("[2024-01-01] INFO - héllo wörld ✓ 日本語 🚀\n\n"
            "Traceback (most recent call last):\n  File \"x.py\", line 1\r\n"
            "    ValueError: ünïcode\n"
            "no newline at the end")
    sink.write(KEY, 1, text)

    assert sink.read(KEY, 1) == text
    assert _streams(logs) == [CloudWatchLogSink.stream_name(KEY, 1)]
    events = logs.get_log_events(logGroupName=GROUP, logStreamName=CloudWatchLogSink.stream_name(KEY, 1),
                                 startFromHead=True)["events"]
    assert [e["message"] for e in events] == [
        "[2024-01-01] INFO - héllo wörld ✓ 日本語 🚀\n", "\n", "Traceback (most recent call last):\n",
        "  File \"x.py\", line 1\r\n", "    ValueError: ünïcode\n", "no newline at the end"]  # an event per line
    assert len({e["timestamp"] for e in events}) == 1  # the delivery's time
    assert events[0]["timestamp"] > 1_600_000_000_000  # milliseconds


def test_a_log_bigger_than_one_batch_is_split_within_the_limits(logs) -> None:
    sink = CloudWatchLogSink(logs, GROUP)
    puts = _record_puts(logs)
    many = "".join(f"line {i} ✓\n" for i in range(23_456))  # more events than one call (and one page) holds
    wide = "".join(f"{i}{'x' * 200_000}\n" for i in range(7))  # more bytes than one call holds
    huge = "a" + "é" * 400_000 + "\n"  # one line over the 256 KiB event limit; cuts fall inside characters
    text = many + wide + huge + "tail"
    sink.write(KEY, 2, text)

    assert len(puts) >= 4
    for batch in puts:
        assert 1 <= len(batch) <= 10_000
        sizes = [len(e["message"].encode("utf-8")) for e in batch]
        assert max(sizes) + 26 <= 256 * 1024
        assert sum(sizes) + 26 * len(batch) <= 1024 * 1024
        assert [e["timestamp"] for e in batch] == sorted(e["timestamp"] for e in batch)
    assert sum(len(batch) for batch in puts) == 23_456 + 7 + 4 + 1  # the long line became 4 events
    assert sink.read(KEY, 2) == text  # the read follows nextForwardToken over several pages


def test_a_second_delivery_of_the_same_try_reads_as_written_once(logs) -> None:
    sink = CloudWatchLogSink(logs, GROUP)
    sink.write(KEY, 1, "first line\nend of try 1\n")
    sink.write(KEY, 1, "first line\nend of try 1\n")  # the stream exists: not an error
    assert sink.read(KEY, 1) == "first line\nend of try 1\n"
    sink.write(KEY, 1, "redelivered\n")  # the latest delivery wins, as a file or an S3 object is overwritten
    assert sink.read(KEY, 1) == "redelivered\n"
    assert _streams(logs) == [CloudWatchLogSink.stream_name(KEY, 1)]


def test_undecodable_output_does_not_lose_the_log(logs) -> None:
    sink = CloudWatchLogSink(logs, GROUP)
    sink.write(KEY, 1, "bad \udcff byte\nnext\n")  # a lone surrogate: not encodable as UTF-8
    assert sink.read(KEY, 1) == "bad ? byte\nnext\n"


def test_an_empty_log_still_creates_its_stream(logs) -> None:
    sink = CloudWatchLogSink(logs, GROUP)
    puts = _record_puts(logs)
    sink.write(KEY, 1, "")
    assert puts == []  # PutLogEvents refuses an empty message
    assert _streams(logs) == [CloudWatchLogSink.stream_name(KEY, 1)]
    assert sink.read(KEY, 1) == ""


def test_reading_a_missing_try_is_none(logs) -> None:
    sink = CloudWatchLogSink(logs, GROUP)
    sink.write(KEY, 1, "one\n")
    assert sink.read(KEY, 2) is None
    assert sink.read(TIKey(KEY.dag_id, KEY.run_id, KEY.task_id, 0), 1) is None
    assert CloudWatchLogSink(logs, "no-such-group").read(KEY, 1) is None


def test_mapped_tasks_and_tries_get_their_own_streams(logs) -> None:
    sink = CloudWatchLogSink(logs, GROUP)
    keys = [TIKey("etl", "scheduled__2024-01-01T00:00:00+00:00", "group.load", index) for index in (-1, 0, 1, 12)]
    for key in keys:
        for try_number in (1, 2):
            sink.write(key, try_number, f"{key.map_index}/{try_number}\n")
    for key in keys:
        for try_number in (1, 2):
            assert sink.read(key, try_number) == f"{key.map_index}/{try_number}\n"
    assert CloudWatchLogSink.stream_name(keys[0], 1) == (
        "etl/scheduled__2024-01-01T00%3A00%3A00%2B00%3A00/group.load/-1/1")
    assert CloudWatchLogSink.stream_name(keys[1], 2).endswith("/group.load/0/2")
    assert len(_streams(logs)) == 8


ODD_RUN_IDS = ["manual__2024-01-01T00:00:00+00:00", "a:b", "a*b", "a_b", "a%3Ab", "a/b", "a%2Fb", "a b", "a#b",
               "ünï/cödé", "x" * 250, ":" * 250, ":" * 249 + "*", "*" * 250]


def test_odd_run_ids_give_valid_distinct_streams(logs) -> None:
    sink = CloudWatchLogSink(logs, GROUP)
    names = {}
    for run_id in ODD_RUN_IDS:
        key = TIKey("d" * 250, run_id, "t" * 250, 3)
        name = CloudWatchLogSink.stream_name(key, 1)
        assert STREAM_NAME.match(name), name
        names[run_id] = name
        sink.write(key, 1, f"run {run_id}\n")
    assert len(set(names.values())) == len(ODD_RUN_IDS)  # no two runs share a stream
    for run_id in ODD_RUN_IDS:
        assert sink.read(TIKey("d" * 250, run_id, "t" * 250, 3), 1) == f"run {run_id}\n"
    # An id cannot spill into its neighbour: the separator is encoded inside ids.
    assert (CloudWatchLogSink.stream_name(TIKey("d", "a/b", "c", -1), 1)
            != CloudWatchLogSink.stream_name(TIKey("d", "a", "b/c", -1), 1))
    assert CloudWatchLogSink.stream_name(TIKey("d", "a:b", "t", -1), 1) == "d/a%3Ab/t/-1/1"
