"""``PrivateNetwork``: an existing VPC (``config.ExistingVpc``) the functions that run DAG code and the Fargate
tasks run in, imported by ids (no lookup: synth works offline), with the endpoints they reach AWS through.

Which functions: the parser (it imports DAG files, whose top-level code may read what a private subnet holds,
as MWAA's DAG processor runs in its VPC), the worker (tasks and callbacks) and the trigger check (a polling
trigger's look at a private resource). The scheduler, the API and the asset-events function never run DAG code:
they stay outside the VPC, needing no endpoint and no ENI (the API's latency is not behind a VPC hop).

Without a NAT in the VPC, those functions and the tasks reach AWS's APIs through VPC endpoints: DynamoDB and S3
gateway endpoints (free; routes in the private subnets' route tables) and the interface endpoints of
``EnvironmentSettings.interface_endpoints`` in each private subnet, with private DNS so the SDK's default
regional endpoints resolve to them. The endpoints' security group admits HTTPS from the workers' groups only.
Lambda's own logs and the X-Ray daemon's segments leave through Lambda's side, not the function's ENI.
Endpoints are raw ``CfnVPCEndpoint`` resources: CDK's L2 endpoints place one subnet per AZ and so need each
subnet's AZ, which the settings do not carry (the settings ask for one subnet per AZ instead).
"""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from constructs import Construct

from infra.config import GATEWAY_ENDPOINTS, EnvironmentSettings
from updraft.resources import ResourceNames

HTTPS = 443


class PrivateNetwork(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings,
                 names: ResourceNames) -> None:
        super().__init__(scope, construct_id)
        existing = settings.vpc
        assert existing is not None, "PrivateNetwork is for an environment with an ExistingVpc"
        self.settings = existing
        # The subnets are given by id where used, not in the import (which would pair each with an AZ the
        # settings do not carry); the import's AZs (the stack's Fn::GetAZs picks) are paired with nothing.
        self.vpc = ec2.Vpc.from_vpc_attributes(self, "Vpc", vpc_id=existing.vpc_id,
                                               availability_zones=Stack.of(self).availability_zones)
        self.subnets = [ec2.Subnet.from_subnet_id(self, f"Subnet{i}", subnet_id)
                        for i, subnet_id in enumerate(existing.private_subnet_ids)]
        if existing.security_group_ids:
            self.security_groups = [ec2.SecurityGroup.from_security_group_id(self, f"Group{i}", group_id)
                                    for i, group_id in enumerate(existing.security_group_ids)]
        else:
            self.security_groups = [ec2.SecurityGroup(
                self, "WorkerSecurityGroup", vpc=self.vpc, allow_all_outbound=True,
                description=f"Updraft {names.environment} workers (DAG-code functions, Fargate tasks): egress only")]
        self.interface_endpoints: list[ec2.CfnVPCEndpoint] = []
        if existing.create_endpoints:
            self._endpoints(settings, names)

    def _endpoints(self, settings: EnvironmentSettings, names: ResourceNames) -> None:
        assert self.settings.create_endpoints
        region = Stack.of(self).region
        for service in GATEWAY_ENDPOINTS:
            ec2.CfnVPCEndpoint(self, f"Gateway-{service}", vpc_id=self.vpc.vpc_id,
                               service_name=f"com.amazonaws.{region}.{service}", vpc_endpoint_type="Gateway",
                               route_table_ids=list(self.settings.route_table_ids))
        group = ec2.SecurityGroup(
            self, "EndpointSecurityGroup", vpc=self.vpc, allow_all_outbound=False,
            description=f"Updraft {names.environment} interface endpoints: HTTPS from the workers only")
        for worker_group in self.security_groups:
            group.add_ingress_rule(ec2.Peer.security_group_id(worker_group.security_group_id), ec2.Port.tcp(HTTPS),
                                   "HTTPS from the Updraft workers")
        for service in settings.interface_endpoints():
            self.interface_endpoints.append(ec2.CfnVPCEndpoint(
                self, f"Interface-{service}", vpc_id=self.vpc.vpc_id,
                service_name=f"com.amazonaws.{region}.{service}", vpc_endpoint_type="Interface",
                private_dns_enabled=True, subnet_ids=list(self.settings.private_subnet_ids),
                security_group_ids=[group.security_group_id]))

    @property
    def subnet_ids(self) -> list[str]:
        return list(self.settings.private_subnet_ids)

    @property
    def security_group_ids(self) -> list[str]:
        return [group.security_group_id for group in self.security_groups]
