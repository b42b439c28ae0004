"""The idle cost (``updraft.cost.idle``) counts what the stack keeps by the month: its counts are the template's
(in both networking modes: an existing VPC adds its interface endpoints), and the API function knows the scheduler's
memory it prices the tick with."""

from __future__ import annotations

import dataclasses

import pytest

from infra.config import settings_for
from tests.infra.cfn import function_id, of_type, render
from tests.infra.conftest import EXISTING_VPC
from updraft.config import UpdraftConfig
from updraft.cost.idle import HOURS_PER_MONTH, STACK_RESOURCES, IdleInputs, idle_cost


@pytest.mark.parametrize("mode", ["synth", "vpc_synth"])
def test_the_monthly_resources_priced_are_the_stacks(request: pytest.FixtureRequest, mode: str) -> None:
    synth = request.getfixturevalue(mode)
    assert {"kms_keys": len(of_type(synth.resources, "AWS::KMS::Key")),
            "alarms": len(of_type(synth.resources, "AWS::CloudWatch::Alarm")),
            "dashboards": len(of_type(synth.resources, "AWS::CloudWatch::Dashboard"))} == STACK_RESOURCES
    assert of_type(synth.resources, "AWS::EC2::NatGateway") == {}  # none to price


def _api_config(synth) -> UpdraftConfig:
    return UpdraftConfig.from_env(render(synth.resources[function_id(synth.resources, "api")]["Properties"][
        "Environment"]["Variables"]))


def _interface_endpoint_azs(synth) -> int:
    return sum(len(e["Properties"]["SubnetIds"]) for e in of_type(synth.resources, "AWS::EC2::VPCEndpoint").values()
               if e["Properties"]["VpcEndpointType"] == "Interface")


def test_the_idle_cost_prices_the_interface_endpoints_the_template_has(synth, vpc_synth) -> None:
    """Each interface endpoint is billed by the hour in each subnet ($0.01 in us-east-1): 8 endpoints in 2 subnets
    are 16 endpoint-AZs, $116.80 a month; the gateway endpoints are free. The default mode has none."""
    assert _interface_endpoint_azs(synth) == _api_config(synth).interface_endpoint_azs == 0
    azs = _interface_endpoint_azs(vpc_synth)
    config = _api_config(vpc_synth)  # the API serves GET /cost/idle
    settings = dataclasses.replace(settings_for("dev"), vpc=EXISTING_VPC)
    assert config.interface_endpoint_azs == settings.interface_endpoint_azs() == azs == 16
    month = idle_cost(IdleInputs.of_config(config, "dev"))
    (line,) = [line for line in month["lines"] if line["name"] == "VPC interface endpoints"]
    assert line["quantity"] == azs * HOURS_PER_MONTH and line["usd"] == pytest.approx(116.8)
    default = idle_cost(IdleInputs.of_config(_api_config(synth), "dev"))
    assert not [line for line in default["lines"] if line["name"] == "VPC interface endpoints"]
    assert month["usd_per_month"] == pytest.approx(default["usd_per_month"] + 116.8, abs=1e-3)


def test_the_api_prices_the_tick_with_the_schedulers_memory(synth) -> None:
    api = render(synth.resources[function_id(synth.resources, "api")]["Properties"]["Environment"]["Variables"])
    assert api["UPDRAFT_SCHEDULER_MEMORY_MB"] == str(settings_for("dev").scheduler.memory_mib)
