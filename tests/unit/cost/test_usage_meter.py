"""A try's meter: DynamoDB's reported units (estimated where none is reported), S3 and CloudWatch Logs requests and
bytes, compute by executor, which try a request belongs to, the wait's transitions; and how a try number's runs
add up on its record."""

from __future__ import annotations

import datetime as dt
import threading
from types import SimpleNamespace

import pytest

from updraft.model.deferrals import POLL_KIND, Deferral
from updraft.model.states import TaskInstanceState
from updraft.model.usage import Usage, accumulated
from updraft.runtime import usage_meter
from updraft.runtime.usage_meter import UsageMeter, metering, wait_transitions, with_usage
from updraft.scheduling.try_lifecycle import TryResult

NOW = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _after(operation: str, service: str, parsed: dict, headers: dict | None = None) -> None:
    usage_meter._after(http_response=SimpleNamespace(headers=headers or {}), parsed=parsed,
                       model=SimpleNamespace(name=operation), event_name=f"after-call.{service}.{operation}")


def test_dynamodb_units_as_reported_and_one_unit_estimated_where_none_is():
    meter = UsageMeter(1, executor="lambda", memory_mb=2048)
    with metering(meter):
        _after("UpdateItem", "dynamodb", {"ConsumedCapacity": {"TableName": "t", "CapacityUnits": 3.0}})
        _after("Query", "dynamodb", {"ConsumedCapacity": {"CapacityUnits": 1.5}})
        _after("BatchGetItem", "dynamodb", {"ConsumedCapacity": [{"CapacityUnits": 0.5}, {"CapacityUnits": 2}]})
        _after("PutItem", "dynamodb", {"Error": {"Code": "ConditionalCheckFailedException"}})  # charged, unreported
        _after("GetItem", "dynamodb", {})
    usage = meter.usage(end_write=False)
    assert usage.dynamodb_requests == 5
    assert usage.dynamodb_write_units == 3 + 1 and usage.dynamodb_estimated_write_units == 1
    assert usage.dynamodb_read_units == 1.5 + 2.5 + 0.5 and usage.dynamodb_estimated_read_units == 0.5
    with_end = meter.usage()  # the end write about to be sent: one more request, one estimated write unit
    assert (with_end.dynamodb_requests, with_end.dynamodb_estimated_write_units) == (6, 2)


def test_s3_and_logs_requests_and_bytes():
    meter = UsageMeter(1, executor="lambda")
    with metering(meter):
        usage_meter._before(params={"Bucket": "b", "Key": "k", "Body": b"x" * 300},
                            event_name="provide-client-params.s3.PutObject")
        _after("PutObject", "s3", {})
        _after("GetObject", "s3", {}, {"content-length": "1200"})
        _after("HeadObject", "s3", {})
        usage_meter._before(params={"logEvents": [{"message": "héllo"}, {"message": "x" * 10}]},
                            event_name="provide-client-params.cloudwatch-logs.PutLogEvents")
    usage = meter.usage()
    assert (usage.s3_write_requests, usage.s3_read_requests, usage.s3_bytes) == (1, 2, 1500)
    assert (usage.logs_requests, usage.logs_bytes) == (1, 6 + 10)


def test_compute_lambda_by_its_time_and_fargate_with_its_minute_minimum():
    clock = Clock()
    lam = UsageMeter(1, executor="lambda", memory_mb=1536, clock=clock)
    fargate = UsageMeter(1, executor="fargate", cpu=2048, memory_mb=4096, clock=clock)
    clock.now += 30
    assert lam.usage().lambda_gb_s == pytest.approx(1.5 * 30) and lam.usage().lambda_requests == 1
    assert (fargate.usage().fargate_vcpu_s, fargate.usage().fargate_gb_s) == (2 * 60, 4 * 60)  # billed a minute
    clock.now += 90
    assert (fargate.usage().fargate_vcpu_s, fargate.usage().fargate_gb_s) == (2 * 120, 4 * 120)
    assert fargate.usage().lambda_requests == 0


def test_a_request_is_the_trys_of_its_thread_or_of_the_only_one_running():
    one, two = UsageMeter(1, executor="lambda"), UsageMeter(1, executor="lambda")
    ran = threading.Event()

    def other_thread() -> None:  # the heartbeat, the proxy serving the try's child: no meter of their own
        _after("UpdateItem", "dynamodb", {"ConsumedCapacity": {"CapacityUnits": 1.0}})
        ran.set()

    with metering(one):
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert one.usage(end_write=False).dynamodb_requests == 1  # the only meter: the process is its try's
        done = threading.Event()

        def second_try() -> None:
            with metering(two):
                _after("GetItem", "dynamodb", {"ConsumedCapacity": {"CapacityUnits": 0.5}})
                worker = threading.Thread(target=other_thread)
                worker.start()
                worker.join()
            done.set()

        threading.Thread(target=second_try).start()
        assert done.wait(5)
    assert one.usage(end_write=False).dynamodb_requests == 1  # two tries at once: nobody's request is nobody's
    assert two.usage(end_write=False).dynamodb_requests == 1
    _after("GetItem", "dynamodb", {})  # no meter running: nothing counted, nothing raised


def test_with_usage_only_under_a_meter_and_with_the_waits_transitions():
    result = TryResult(TaskInstanceState.SUCCESS)
    assert with_usage(result) is result
    deferral = Deferral(classpath="t.T", kwargs={}, next_method="m", next_kwargs=None, resume_at=NOW,
                        times_out=False)
    with metering(UsageMeter(2, executor="lambda")):
        deferred = with_usage(TryResult(TaskInstanceState.DEFERRED, deferral=deferral))
    assert deferred.usage.try_number == 2 and deferred.usage.sfn_transitions == 3
    assert wait_transitions(TryResult(TaskInstanceState.DEFERRED, deferral=Deferral(
        classpath="t.T", kwargs={}, next_method="m", next_kwargs=None, resume_at=NOW, times_out=False,
        kind=POLL_KIND))) == 4
    assert wait_transitions(TryResult(TaskInstanceState.UP_FOR_RESCHEDULE, reschedule_date=NOW)) == 3
    assert wait_transitions(TryResult(TaskInstanceState.FAILED)) == 0


def test_a_try_numbers_runs_add_up_and_a_new_try_starts_afresh():
    first = Usage(try_number=1, seconds=2, lambda_requests=1, lambda_gb_s=2, sfn_transitions=3)
    record = accumulated(None, first)
    resumed = accumulated(record, Usage(try_number=1, seconds=1, lambda_requests=1, lambda_gb_s=1))
    assert Usage.from_record(resumed) == Usage(try_number=1, seconds=3, lambda_requests=2, lambda_gb_s=3,
                                               sfn_transitions=3)
    retry = accumulated(resumed, Usage(try_number=2, seconds=5, lambda_requests=1, lambda_gb_s=5))
    assert Usage.from_record(retry) == Usage(try_number=2, seconds=5, lambda_requests=1, lambda_gb_s=5)
    assert "fargate_vcpu_s" not in retry  # zero quantities are left out of the item
    assert Usage.from_record(None) is None and Usage.from_record({}) is None
