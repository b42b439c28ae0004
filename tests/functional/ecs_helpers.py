"""A Fargate cluster on moto's ECS, for the executor and handler tests that start tasks."""

from __future__ import annotations

from typing import Any

import boto3


def fargate_cluster(region: str) -> tuple[Any, str, str]:
    """The cluster ``updraft`` with the task family ``updraft-worker``: (ecs client, subnet id, security group id).

    moto's ECS reads the ENI's private DNS name, which it only sets in a VPC with DNS hostnames (a third workaround
    beside the notes' two; Fargate VPCs have them on anyway), and needs container-level cpu and memory (notes 2e,
    bug 1) where real Fargate only needs the task's.
    """
    ec2 = boto3.client("ec2", region_name=region)
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True})
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName="worker", Description="worker", VpcId=vpc)["GroupId"]
    ecs = boto3.client("ecs", region_name=region)
    ecs.create_cluster(clusterName="updraft")
    ecs.register_task_definition(family="updraft-worker", requiresCompatibilities=["FARGATE"], networkMode="awsvpc",
                                 cpu="512", memory="1024", containerDefinitions=[
                                     {"name": "worker", "image": "updraft-worker:latest", "cpu": 512,
                                      "memory": 1024}])
    return ecs, subnet, group
