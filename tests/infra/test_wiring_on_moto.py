"""The synthesized wiring, deployed by hand on moto: the scheduler's environment from the template builds a Fargate
executor whose RunTask the synthesized task definition accepts, and the worker's writes task logs to the synthesized
task log group (the session's one synth; no new one).

moto records RunTask without running anything (shared/notes/aws-offline.md 2e); what this checks is that the
names, subnets, security group and container the stack writes into the environment fit together, and that the
task definition satisfies moto's container-level cpu/memory requirement.
"""

from __future__ import annotations

import json

import boto3
from moto import mock_aws

from tests.infra.cfn import function_id, of_type, render
from updraft.config import UpdraftConfig
from updraft.executors.base import Dispatch
from updraft.executors.fargate import DISPATCH_ENV
from updraft.model.records import TIKey
from updraft.runtime.logs import CloudWatchLogSink
from updraft.services import Services

REGION = "us-east-1"
DISPATCH = Dispatch(TIKey("etl", "manual__2024-01-01T00:00:00+00:00", "train"), 1, "c" * 32, executor="fargate",
                    compute={"executor": "fargate", "cpu": 1024, "memory": 4096})


def _deploy_network_and_cluster(resources: dict) -> dict[str, str]:
    """Create what the template's VPC, subnets, security group, cluster and table stand for; their ids by key."""
    ec2 = boto3.client("ec2", region_name=REGION)
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True})  # moto's ECS reads the ENI's DNS name
    deployed = {}
    for index, subnet_id in enumerate(sorted(of_type(resources, "AWS::EC2::Subnet"))):
        deployed[subnet_id] = ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{index}.0/24")["Subnet"]["SubnetId"]
    (group_id,) = of_type(resources, "AWS::EC2::SecurityGroup")
    deployed[f"{group_id}.GroupId"] = ec2.create_security_group(GroupName="workers", Description="egress only",
                                                                VpcId=vpc)["GroupId"]
    ((cluster_id, cluster),) = of_type(resources, "AWS::ECS::Cluster").items()
    deployed[cluster_id] = boto3.client("ecs", region_name=REGION).create_cluster(
        clusterName=cluster["Properties"]["ClusterName"])["cluster"]["clusterName"]
    ((table_id, table),) = of_type(resources, "AWS::DynamoDB::Table").items()
    deployed[table_id] = table["Properties"]["TableName"]
    ((bucket_id, bucket),) = of_type(resources, "AWS::S3::Bucket").items()
    deployed[bucket_id] = bucket["Properties"]["BucketName"]
    for group_id, group in of_type(resources, "AWS::Logs::LogGroup").items():
        if "LogGroupName" in group["Properties"]:  # the task logs' and the state machine's (the others: generated)
            deployed[group_id] = group["Properties"]["LogGroupName"]
            boto3.client("logs", region_name=REGION).create_log_group(logGroupName=deployed[group_id])
    return deployed


def _register_task_definition(resources: dict, deployed: dict[str, str]) -> dict:
    (task,) = of_type(resources, "AWS::ECS::TaskDefinition").values()
    props = task["Properties"]
    containers = [{"name": c["Name"], "image": "updraft-worker:deployed", "cpu": c["Cpu"], "memory": c["Memory"],
                   "essential": c["Essential"],
                   "environment": [{"name": e["Name"], "value": render(e["Value"], deployed)}
                                   for e in c["Environment"]]}
                  for c in props["ContainerDefinitions"]]
    return boto3.client("ecs", region_name=REGION).register_task_definition(
        family=props["Family"], requiresCompatibilities=props["RequiresCompatibilities"],
        networkMode=props["NetworkMode"], cpu=props["Cpu"], memory=props["Memory"],
        containerDefinitions=containers)["taskDefinition"]


def test_the_schedulers_environment_runs_the_synthesized_task_definition(synth) -> None:
    with mock_aws():
        deployed = _deploy_network_and_cluster(synth.resources)
        registered = _register_task_definition(synth.resources, deployed)
        scheduler = synth.resources[function_id(synth.resources, "scheduler")]["Properties"]
        env = render(scheduler["Environment"]["Variables"], deployed)
        assert not [v for v in env.values() if "<" in v]  # everything it names was deployed
        services = Services(UpdraftConfig.from_env({**env, "AWS_REGION": REGION}))

        services.executor.dispatch([DISPATCH])

        fargate = services.executor.executors["fargate"]
        assert fargate.failures == 0
        ecs = services.client("ecs")
        (task,) = ecs.describe_tasks(cluster=env["UPDRAFT_ECS_CLUSTER"],
                                     tasks=[fargate.task_arns[DISPATCH.try_id]])["tasks"]
        assert task["taskDefinitionArn"] == registered["taskDefinitionArn"]  # the family's latest revision
        (override,) = task["overrides"]["containerOverrides"]
        assert override["name"] == registered["containerDefinitions"][0]["name"]
        overridden = {e["name"]: e["value"] for e in override["environment"]}
        assert json.loads(overridden[DISPATCH_ENV]) == DISPATCH.to_payload()
        # The task is told the same executors, so its mini scheduler can dispatch the next tasks.
        assert UpdraftConfig.from_env(overridden).fargate_configured
        assert overridden["UPDRAFT_WORKER_FUNCTION"] == env["UPDRAFT_WORKER_FUNCTION"]
        network = fargate.run_task_request(DISPATCH)["networkConfiguration"]["awsvpcConfiguration"]
        subnets = {v for k, v in deployed.items() if k in of_type(synth.resources, "AWS::EC2::Subnet")}
        assert (set(network["subnets"]), network["assignPublicIp"]) == (subnets, "ENABLED")
        assert network["securityGroups"] == [v for k, v in deployed.items() if k.endswith(".GroupId")]


def test_the_workers_environment_writes_task_logs_to_the_task_log_group(synth) -> None:
    with mock_aws():
        deployed = _deploy_network_and_cluster(synth.resources)
        worker = synth.resources[function_id(synth.resources, "worker")]["Properties"]
        env = render(worker["Environment"]["Variables"], deployed)
        assert env["UPDRAFT_TASK_LOG_GROUP"] == "updraft-dev-task-logs"
        services = Services(UpdraftConfig.from_env({**env, "AWS_REGION": REGION}))
        assert isinstance(services.log_sink, CloudWatchLogSink)

        services.log_sink.write(DISPATCH.key, 1, "extracting\ndone\n")

        (stream,) = services.client("logs").describe_log_streams(logGroupName="updraft-dev-task-logs")["logStreams"]
        assert stream["logStreamName"] == "etl/manual__2024-01-01T00%3A00%3A00%2B00%3A00/train/-1/1"
        assert services.log_sink.read(DISPATCH.key, 1) == "extracting\ndone\n"
