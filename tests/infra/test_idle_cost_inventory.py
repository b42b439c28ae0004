"""The idle cost (``updraft.cost.idle``) counts what the stack keeps by the month: its counts are the template's,
and the API function knows the scheduler's memory it prices the tick with."""

from __future__ import annotations

from infra.config import settings_for
from tests.infra.cfn import function_id, of_type, render
from updraft.cost.idle import STACK_RESOURCES


def test_the_monthly_resources_priced_are_the_stacks(synth) -> None:
    assert {"kms_keys": len(of_type(synth.resources, "AWS::KMS::Key")),
            "alarms": len(of_type(synth.resources, "AWS::CloudWatch::Alarm")),
            "dashboards": len(of_type(synth.resources, "AWS::CloudWatch::Dashboard"))} == STACK_RESOURCES
    assert of_type(synth.resources, "AWS::EC2::NatGateway") == {}  # none to price


def test_the_api_prices_the_tick_with_the_schedulers_memory(synth) -> None:
    api = render(synth.resources[function_id(synth.resources, "api")]["Properties"]["Environment"]["Variables"])
    assert api["UPDRAFT_SCHEDULER_MEMORY_MB"] == str(settings_for("dev").scheduler.memory_mib)
