"""Networking per environment (``infra/config.py``'s ``vpc``): the default (no VPC for the functions, the Fargate
tasks' own public subnets, no NAT) and an existing VPC (``ExistingVpc``) for the functions that run DAG code and the
Fargate tasks, private subnets and no public IP, with the endpoints they reach AWS through."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from infra.config import INTERFACE_ENDPOINTS, ExistingVpc, SecretsSettings, settings_for
from tests.infra.cfn import as_list, function_id, function_role, of_type, render, role_statements
from tests.infra.conftest import EXISTING_VPC, ROOT, synthesize
from updraft.config import UpdraftConfig

IN_VPC = ("parser", "worker", "trigger_check")  # the functions that run DAG code
OUTSIDE = ("scheduler", "api", "asset_events")  # never run DAG code: no ENI, no endpoint needed
THREE_SUBNETS = ("subnet-0000000a", "subnet-0000000b", "subnet-0000000c")


def _function(synth, name: str) -> dict:
    return synth.resources[function_id(synth.resources, name)]["Properties"]


def _config(synth, name: str) -> UpdraftConfig:
    return UpdraftConfig.from_env(render(_function(synth, name)["Environment"]["Variables"]))


def _worker_group(synth) -> str:
    (group,) = [k for k, v in of_type(synth.resources, "AWS::EC2::SecurityGroup").items()
                if v["Properties"]["GroupDescription"].endswith("egress only")]
    return group


def _endpoints(synth, kind: str) -> dict[str, dict]:
    return {e["Properties"]["ServiceName"].removeprefix("com.amazonaws.us-east-1."): e["Properties"]
            for e in of_type(synth.resources, "AWS::EC2::VPCEndpoint").values()
            if e["Properties"].get("VpcEndpointType") == kind}


# -- the default ----------------------------------------------------------------------------------------------

def test_by_default_no_function_is_in_a_vpc_and_the_tasks_get_a_public_ip(synth) -> None:
    assert all("VpcConfig" not in fn["Properties"] for fn in of_type(synth.resources, "AWS::Lambda::Function").values())
    assert _config(synth, "worker").ecs_public_ip and _config(synth, "api").interface_endpoint_azs == 0
    assert _endpoints(synth, "Interface") == {}
    assert len(of_type(synth.resources, "AWS::EC2::VPC")) == 1  # the tasks' own (test_stack.py checks it)


# -- an existing VPC ----------------------------------------------------------------------------------------

def test_the_functions_that_run_dag_code_are_in_the_private_subnets(vpc_synth) -> None:
    group = _worker_group(vpc_synth)
    for name in IN_VPC:
        assert _function(vpc_synth, name)["VpcConfig"] == {
            "SubnetIds": list(EXISTING_VPC.private_subnet_ids), "SecurityGroupIds": [{"Fn::GetAtt": [group, "GroupId"]}]}
    for name in OUTSIDE:
        assert "VpcConfig" not in _function(vpc_synth, name)


def test_fargate_tasks_run_in_the_private_subnets_without_a_public_ip(vpc_synth) -> None:
    """RunTask takes the task's network from the dispatchers' settings (there is no ECS service): the scheduler's,
    the worker Lambda's and the Fargate task's own (its mini scheduler)."""
    group = _worker_group(vpc_synth)
    (container,) = next(iter(of_type(vpc_synth.resources, "AWS::ECS::TaskDefinition").values()))["Properties"][
        "ContainerDefinitions"]
    task = UpdraftConfig.from_env({e["Name"]: render(e["Value"]) for e in container["Environment"]})
    for config in (_config(vpc_synth, "scheduler"), _config(vpc_synth, "worker"), task):
        assert config.fargate_configured
        assert config.ecs_subnets == EXISTING_VPC.private_subnet_ids
        assert config.ecs_security_groups == (f"<{group}.GroupId>",)
        assert config.ecs_public_ip is False
    # Nothing of the default network is created: no VPC, subnet, internet gateway or NAT.
    for kind in ("AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::InternetGateway", "AWS::EC2::NatGateway"):
        assert of_type(vpc_synth.resources, kind) == {}, kind


def test_the_created_group_allows_egress_only(vpc_synth) -> None:
    group = vpc_synth.resources[_worker_group(vpc_synth)]["Properties"]
    assert group["VpcId"] == EXISTING_VPC.vpc_id and "SecurityGroupIngress" not in group
    assert [(e["CidrIp"], e["IpProtocol"]) for e in group["SecurityGroupEgress"]] == [("0.0.0.0/0", "-1")]


def test_the_endpoints_the_workers_reach_aws_through(vpc_synth) -> None:
    gateways = _endpoints(vpc_synth, "Gateway")
    assert set(gateways) == {"dynamodb", "s3"}
    assert all(g["RouteTableIds"] == list(EXISTING_VPC.route_table_ids) for g in gateways.values())
    interfaces = _endpoints(vpc_synth, "Interface")
    assert set(interfaces) == set(INTERFACE_ENDPOINTS)
    (endpoint_group,) = {render(e["SecurityGroupIds"][0]) for e in interfaces.values()}
    for endpoint in interfaces.values():
        assert endpoint["VpcId"] == EXISTING_VPC.vpc_id and endpoint["PrivateDnsEnabled"] is True
        assert endpoint["SubnetIds"] == list(EXISTING_VPC.private_subnet_ids)
    group = vpc_synth.resources[endpoint_group.strip("<>").split(".")[0]]["Properties"]
    # HTTPS from the workers' group only, and no egress (CDK's placeholder rule for "none").
    assert [(r["IpProtocol"], r["FromPort"], r["ToPort"], render(r["SourceSecurityGroupId"]))
            for r in group["SecurityGroupIngress"]] == [("tcp", 443, 443, f"<{_worker_group(vpc_synth)}.GroupId>")]
    assert [e["CidrIp"] for e in group["SecurityGroupEgress"]] == ["255.255.255.255/32"]


# The endpoint a role's granted actions go through, by IAM's service prefix; and the prefixes that need none:
# PassRole is authorized inside ECS's RunTask, the on-failure destination (SQS) is sent by Lambda's service, X-Ray
# segments go to Lambda's daemon, and Lambda itself manages the functions' network interfaces (EC2).
ENDPOINT_OF = {"dynamodb": "dynamodb", "s3": "s3", "lambda": "lambda", "states": "states", "logs": "logs",
               "ecs": "ecs", "ecr": "ecr.api", "kms": "kms", "ses": "email", "secretsmanager": "secretsmanager",
               "ssm": "ssm"}
NO_ENDPOINT = {"iam", "sqs", "xray", "ec2"}


def test_every_service_the_workers_may_call_has_its_endpoint(vpc_synth) -> None:
    """What the functions in the VPC and the Fargate task are granted is what they call: each service's endpoint
    exists (a grant to a new service fails here until its endpoint is added), and the DAG-code role they assume
    through STS trusts each of them."""
    (task,) = of_type(vpc_synth.resources, "AWS::ECS::TaskDefinition").values()
    roles = [function_role(vpc_synth.resources, name) for name in IN_VPC] + [
        task["Properties"][key]["Fn::GetAtt"][0] for key in ("TaskRoleArn", "ExecutionRoleArn")]
    endpoints = set(_endpoints(vpc_synth, "Interface")) | set(_endpoints(vpc_synth, "Gateway"))
    prefixes = {action.split(":")[0] for role in roles for statement in role_statements(vpc_synth.resources, role)
                for action in as_list(statement["Action"])}
    assert prefixes - NO_ENDPOINT <= set(ENDPOINT_OF), prefixes - NO_ENDPOINT - set(ENDPOINT_OF)
    assert {ENDPOINT_OF[p] for p in prefixes - NO_ENDPOINT} <= endpoints
    assert {"ecr.dkr", "sts"} <= endpoints  # the image's layers' manifest; AssumeRole of the DAG-code role
    (dag_code,) = [k for k, v in of_type(vpc_synth.resources, "AWS::IAM::Role").items()
                   if "DagCode" in k and "Updraft DAG code" in v["Properties"].get("Description", "")]
    trusted = json.dumps(vpc_synth.resources[dag_code]["Properties"]["AssumeRolePolicyDocument"])
    assert all(role in trusted for role in roles[:4])


def test_given_groups_and_no_endpoints(tmp_path) -> None:
    """A VPC that already reaches AWS (its endpoints, or a NAT): no endpoint, no group created, nothing priced."""
    given = ExistingVpc(vpc_id="vpc-0123abcd", private_subnet_ids=THREE_SUBNETS,
                        security_group_ids=("sg-0aa11111", "sg-0bb22222"), create_endpoints=False)
    synth = synthesize(tmp_path, dataclasses.replace(settings_for("dev"), vpc=given))
    assert of_type(synth.resources, "AWS::EC2::VPCEndpoint") == {}
    assert of_type(synth.resources, "AWS::EC2::SecurityGroup") == {}
    for name in IN_VPC:
        assert _function(synth, name)["VpcConfig"] == {"SubnetIds": list(THREE_SUBNETS),
                                                      "SecurityGroupIds": ["sg-0aa11111", "sg-0bb22222"]}
    worker = _config(synth, "worker")
    assert (worker.ecs_subnets, worker.ecs_security_groups, worker.ecs_public_ip) == (
        given.private_subnet_ids, given.security_group_ids, False)
    assert _config(synth, "api").interface_endpoint_azs == 0


def test_given_groups_with_the_endpoints_of_a_secrets_backend_and_ses(tmp_path) -> None:
    given = ExistingVpc(vpc_id="vpc-0123abcd", private_subnet_ids=THREE_SUBNETS,
                        route_table_ids=("rtb-0000000a",), security_group_ids=("sg-0aa11111", "sg-0bb22222"))
    settings = dataclasses.replace(settings_for("dev"), vpc=given, email_sender="airflow@example.com",
                                   secrets=SecretsSettings(
                                       "airflow.providers.amazon.aws.secrets.secrets_manager.SecretsManagerBackend",
                                       {"connections_prefix": "airflow/connections",
                                        "variables_prefix": "airflow/variables"}))
    synth = synthesize(tmp_path, settings)
    interfaces = _endpoints(synth, "Interface")
    assert set(interfaces) == {*INTERFACE_ENDPOINTS, "secretsmanager", "email"}
    assert all(e["SubnetIds"] == list(given.private_subnet_ids) for e in interfaces.values())
    (group,) = of_type(synth.resources, "AWS::EC2::SecurityGroup").values()  # the endpoints' only
    assert sorted(r["SourceSecurityGroupId"] for r in group["Properties"]["SecurityGroupIngress"]) == [
        "sg-0aa11111", "sg-0bb22222"]
    assert _config(synth, "api").interface_endpoint_azs == 10 * 3 == settings.interface_endpoint_azs()


def test_the_secrets_backend_and_ses_add_their_endpoints() -> None:
    base = dataclasses.replace(settings_for("dev"), vpc=EXISTING_VPC)
    assert base.interface_endpoints() == INTERFACE_ENDPOINTS
    ssm = dataclasses.replace(base, secrets=SecretsSettings(
        "airflow.providers.amazon.aws.secrets.systems_manager.SystemsManagerParameterStoreBackend"),
        email_sender="airflow@example.com")
    assert ssm.interface_endpoints() == (*INTERFACE_ENDPOINTS, "ssm", "email")
    secrets_manager = dataclasses.replace(base, secrets=SecretsSettings(
        "airflow.providers.amazon.aws.secrets.secrets_manager.SecretsManagerBackend"))
    assert secrets_manager.interface_endpoints() == (*INTERFACE_ENDPOINTS, "secretsmanager")
    assert secrets_manager.interface_endpoint_azs() == 9 * 2
    assert settings_for("dev").interface_endpoints() == () and settings_for("dev").interface_endpoint_azs() == 0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"vpc_id": "0123"}, "vpc_id must be"),
    ({"private_subnet_ids": ()}, "at least one private subnet"),
    ({"private_subnet_ids": "subnet-0aaa1111"}, "private_subnet_ids must be a tuple"),
    ({"private_subnet_ids": ("subnet-0aaa1111", "subnet-0aaa1111")}, "repeats a subnet"),
    ({"security_group_ids": ("sg-0aa",)}, "security_group_ids must be"),
    ({"route_table_ids": ("rtb-0ccc3333", "0ddd4444")}, "route_table_ids must be"),
    ({"route_table_ids": ()}, "needs the private subnets' route_table_ids"),
])
def test_an_existing_vpc_is_refused_with_the_reason(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(EXISTING_VPC, **kwargs)
    dataclasses.replace(EXISTING_VPC, route_table_ids=(), create_endpoints=False)  # no gateway endpoint to route


def test_the_infra_readme_states_the_vpc_templates_size(synth, vpc_synth) -> None:
    readme = (ROOT / "infra" / "README.md").read_text()
    stated = re.search(r"In an existing VPC with its endpoints created, the dev template has \*\*(\d+) resources", readme)
    assert stated, "infra/README.md no longer states the VPC mode's template size"
    assert int(stated[1]) == len(vpc_synth.resources)
    gone = {k for k in synth.resources if k not in vpc_synth.resources}
    new = {k for k in vpc_synth.resources if k not in synth.resources}
    assert (len(gone), len(new)) == (14, 12)  # as the README counts them
