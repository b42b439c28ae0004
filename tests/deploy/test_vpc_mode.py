"""``cdk deploy`` of an environment in an existing VPC (``infra.config.ExistingVpc``) on the embedded AWS.

The VPC is made first with EC2's API, as a user's account would already have it: two private subnets (no route
to an internet gateway, no public IPs on launch), their route table, and the security group the user's database
admits. Their ids go into the dev settings as ``infra/config.py`` takes them, and that stack is synthesized (the
same bundles as the default stack's: built once, kept by content) and deployed. Then: every resource is created
or stood in for (the same table as the default stack's); the functions that run DAG code, and the Fargate tasks
the deployed scheduler starts, are in the private subnets with the given group and no public IP; the endpoints
they reach AWS through exist; a DAG's Lambda try and its Fargate try run through the deployed wiring, every AWS
call they made allowed by the deployed roles.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from infra.config import GATEWAY_ENDPOINTS, INTERFACE_ENDPOINTS, ExistingVpc
from tests.deploy.conftest import REGION, STACK, Environment, embedded_aws, synthesize
from tests.deploy.stand_ins import check_every_resource
from tests.deploy.test_deployed_run import EVENTS, _drain, _get, _started_task, _trigger, check_calls_allowed

HTTPS = 443
DAG_CODE_FUNCTIONS = ("parser", "worker", "trigger_check")  # in the VPC: they run DAG code
OUTSIDE = ("scheduler", "api", "asset_events")  # never run DAG code: no VPC, no ENI, no endpoint needed


@dataclasses.dataclass(frozen=True)
class VpcEnvironment:
    environment: Environment
    network: ExistingVpc


def _existing_network(session: Any) -> ExistingVpc:
    """What a user's account already has: a VPC (DNS on, as interface endpoints' private DNS needs), a private
    subnet in each of two AZs, their route table (no internet gateway in it) and a security group."""
    ec2 = session.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.40.0.0/16")["Vpc"]["VpcId"]
    for attribute in ("EnableDnsSupport", "EnableDnsHostnames"):
        ec2.modify_vpc_attribute(VpcId=vpc, **{attribute: {"Value": True}})
    subnets = tuple(ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.40.{i}.0/24", AvailabilityZone=f"{REGION}{az}")
                    ["Subnet"]["SubnetId"] for i, az in ((1, "a"), (2, "b")))
    table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    for subnet in subnets:
        ec2.associate_route_table(RouteTableId=table, SubnetId=subnet)
    group = ec2.create_security_group(GroupName="updraft-workers", Description="Updraft tasks: the database admits it",
                                      VpcId=vpc)["GroupId"]
    return ExistingVpc(vpc_id=vpc, private_subnet_ids=subnets, route_table_ids=(table,), security_group_ids=(group,))


@pytest.fixture(scope="module")
def vpc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VpcEnvironment]:
    from infra.config import settings_for

    with embedded_aws() as aws:
        network = _existing_network(aws.session)
        settings = dataclasses.replace(settings_for("dev"), vpc=network)
        assembly = synthesize(tmp_path_factory.mktemp("cdk.out-vpc"), STACK, settings)
        yield VpcEnvironment(aws.deploy(assembly), network)


def test_the_dag_code_functions_are_in_the_private_subnets_and_the_others_in_no_vpc(vpc: VpcEnvironment) -> None:
    environment, network = vpc.environment, vpc.network
    lam = environment.session.client("lambda")
    for name in DAG_CODE_FUNCTIONS:
        config = lam.get_function_configuration(FunctionName=environment.function(name))["VpcConfig"]
        assert (sorted(config["SubnetIds"]), config["SecurityGroupIds"]) == (
            sorted(network.private_subnet_ids), list(network.security_group_ids)), (name, config)
    for name in OUTSIDE:
        config = lam.get_function_configuration(FunctionName=environment.function(name))
        assert not config.get("VpcConfig", {}).get("SubnetIds"), (name, config["VpcConfig"])


def test_the_endpoints_the_private_subnets_need_are_created(vpc: VpcEnvironment) -> None:
    """DynamoDB and S3 gateway endpoints on the subnets' route table; each interface endpoint in every private
    subnet with private DNS (the SDK's default endpoints resolve to it), behind a group that admits HTTPS from the
    workers' group only."""
    environment, network = vpc.environment, vpc.network
    ec2 = environment.session.client("ec2")
    endpoints = ec2.describe_vpc_endpoints(Filters=[{"Name": "vpc-id", "Values": [network.vpc_id]}])["VpcEndpoints"]
    by_service = {e["ServiceName"].removeprefix(f"com.amazonaws.{REGION}."): e for e in endpoints}
    assert set(by_service) == {*GATEWAY_ENDPOINTS, *INTERFACE_ENDPOINTS}, sorted(by_service)
    for service in GATEWAY_ENDPOINTS:
        gateway = by_service[service]
        assert (gateway["VpcEndpointType"], gateway["RouteTableIds"]) == ("Gateway", list(network.route_table_ids))
    groups: set[str] = set()
    for service in INTERFACE_ENDPOINTS:
        interface = by_service[service]
        assert interface["VpcEndpointType"] == "Interface" and interface["PrivateDnsEnabled"], interface
        assert sorted(interface["SubnetIds"]) == sorted(network.private_subnet_ids), interface
        groups |= {g["GroupId"] for g in interface["Groups"]}
    (group,) = ec2.describe_security_groups(GroupIds=sorted(groups))["SecurityGroups"]
    assert [(p["IpProtocol"], p.get("FromPort"), p.get("ToPort"), [g["GroupId"] for g in p["UserIdGroupPairs"]],
             p["IpRanges"]) for p in group["IpPermissions"]] == [("tcp", HTTPS, HTTPS, list(network.security_group_ids),
                                                                  [])]


MIXED_DAG = """
import pendulum

from airflow.sdk import dag, task


@dag(schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False, is_paused_upon_creation=False)
def private():
    @task
    def on_lambda() -> int:
        print("ran in the worker function")
        return 3

    @task(executor="fargate")
    def on_fargate(n: int) -> None:
        print(f"ran on fargate with {n}")

    on_fargate(on_lambda())


private()
"""


def test_a_lambda_try_and_a_fargate_try_run_through_the_deployed_wiring_in_the_private_subnets(
        vpc: VpcEnvironment) -> None:
    """The DAG file reaches the parser through the bucket's notification; a run triggered through the API runs its
    first try in the worker function (in the VPC); the next try goes to Fargate: the RunTask the deployed code sends
    names the private subnets and the group and asks for no public IP (ECS puts the task's interface there), and
    the task run as its container would finishes the run."""
    from tests.deploy.fargate_runtime import FargateRuntime

    environment, network = vpc.environment, vpc.network
    runtime, session = environment.runtime, environment.session
    session.client("s3").put_object(Bucket=environment.deployed.outputs["BucketName"], Key="dags/private.py",
                                    Body=MIXED_DAG.encode())
    _drain(environment)
    _trigger(environment, "private", "manual__private")
    tick = json.loads((EVENTS / "scheduler" / "eventbridge_tick.json").read_text())
    cluster = environment.deployed.physical[next(k for k, v in environment.assembly.resources.items()
                                                 if v["Type"] == "AWS::ECS::Cluster")]
    ecs = session.client("ecs")
    for _ in range(4):  # the nudge; the worker's try and its mini scheduler; then ticks until the task is started
        _drain(environment)
        if ecs.list_tasks(cluster=cluster)["taskArns"]:
            break
        session.client("lambda").invoke(FunctionName=environment.function("scheduler"), InvocationType="Event",
                                        Payload=json.dumps(tick).encode())
    worker = [r for r in runtime.invocations if r.function == environment.function("worker") and r.error is None]
    assert worker, "no try ran in the deployed worker function"
    _, tis = _get(environment, "/api/v2/dags/private/dagRuns/manual__private/taskInstances")
    assert {t["task_id"]: t["state"] for t in tis["task_instances"]}["on_lambda"] == "success", tis

    task, definition = _started_task(environment, set())
    (run_task,) = [call["params"] for r in runtime.invocations for call in r.calls if call["operation"] == "RunTask"]
    assert run_task["networkConfiguration"] == {"awsvpcConfiguration": {
        "subnets": list(network.private_subnet_ids), "securityGroups": list(network.security_group_ids),
        "assignPublicIp": "DISABLED"}}, run_task
    (attachment,) = task["attachments"]
    details = {d["name"]: d["value"] for d in attachment["details"]}
    assert details["subnetId"] in network.private_subnet_ids
    (interface,) = session.client("ec2").describe_network_interfaces(
        NetworkInterfaceIds=[details["networkInterfaceId"]])["NetworkInterfaces"]
    assert [g["GroupId"] for g in interface["Groups"]] == list(network.security_group_ids)
    assert "Association" not in interface, interface  # no public IP

    (context,) = environment.deployed.image_contexts.values()
    ran = FargateRuntime(runtime, context).run(task, definition)
    assert ran.exit_code == 0, ran.output[-3000:]
    _drain(environment)
    _, state = _get(environment, "/api/v2/dags/private/dagRuns/manual__private")
    assert state["state"] == "success", state


def test_every_call_made_in_the_vpc_is_one_the_deployed_roles_allow(vpc: VpcEnvironment) -> None:
    """The IAM check of the default stack's runs (``iam_check``) on this stack's roles: RunTask into the private
    subnets and the DAG-code functions' calls from inside the VPC included."""
    check_calls_allowed(vpc.environment)


# Last in the module: the stand-ins create what moto skipped, the bucket policy among them, which denies requests
# without TLS (the embedded AWS's are plain HTTP, and moto enforces it).
def test_every_resource_of_the_vpc_stack_is_created_or_stood_in_for(vpc: VpcEnvironment) -> None:
    print(check_every_resource(vpc.environment))
    types = {resource["Type"] for resource in vpc.environment.assembly.resources.values()}
    assert "AWS::EC2::VPC" not in types and "AWS::EC2::Subnet" not in types, "the stack must not make its own VPC"
