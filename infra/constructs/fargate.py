"""The Fargate side of the workers: a VPC without NAT (or an existing VPC's private subnets), an ECS cluster, and
the worker task definition whose image is built from ``infra/worker_image/Dockerfile`` over the DAG-code bundle
(``bundling``).

Docker is needed only when ``cdk deploy`` publishes the image: at synth the asset is a copy of the bundle's folder
(staged into ``cdk.out``), so synth and the tests run on machines without a Docker engine.
"""

from __future__ import annotations

from aws_cdk import ArnFormat, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.config import FargateSettings
from infra.constructs.bundling import Bundle
from infra.constructs.network import PrivateNetwork
from updraft.resources import ResourceNames

DOCKERFILE = "Dockerfile"  # in the bundle's folder: a copy of infra/worker_image/Dockerfile
APP_ROOT = "/app"  # where the image holds the bundle
# The architectures of Lambda and their counterparts for the task and the image.
CPU_ARCHITECTURES = {"x86_64": ecs.CpuArchitecture.X86_64, "arm64": ecs.CpuArchitecture.ARM64}
IMAGE_PLATFORMS = {"x86_64": ecr_assets.Platform.LINUX_AMD64, "arm64": ecr_assets.Platform.LINUX_ARM64}


class FargateWorkers(Construct):
    """Where ``executor="fargate"`` tasks run: by default public subnets in two AZs and no NAT gateway (idle cost
    zero), so tasks get a public IP to reach ECR and the AWS APIs; S3 and DynamoDB go through free gateway
    endpoints, and the security group allows egress only. With a ``network`` (an existing VPC: ``PrivateNetwork``),
    its private subnets and security groups instead, without a public IP. The container's environment and its task
    role's statements are the worker Lambda's (``UpdraftFunctions`` adds them): a Fargate task is a worker, mini
    scheduler included.
    """

    def __init__(self, scope: Construct, construct_id: str, *, names: ResourceNames, settings: FargateSettings,
                 retention: logs.RetentionDays, removal: RemovalPolicy, bundle: Bundle,
                 architecture: str = "x86_64", network: PrivateNetwork | None = None) -> None:
        super().__init__(scope, construct_id)
        self.names = names
        self.network = network
        self.vpc: ec2.IVpc = network.vpc if network is not None else self._own_vpc(names)
        self.cluster = ecs.Cluster(self, "Cluster", vpc=self.vpc, cluster_name=names.ecs_cluster)

        self.task_definition = ecs.FargateTaskDefinition(
            self, "WorkerTask", family=names.ecs_task_family, cpu=settings.cpu, memory_limit_mib=settings.memory_mib,
            runtime_platform=ecs.RuntimePlatform(cpu_architecture=CPU_ARCHITECTURES[architecture],
                                                 operating_system_family=ecs.OperatingSystemFamily.LINUX))
        self.log_group = logs.LogGroup(self, "WorkerTaskLogs", retention=retention, removal_policy=removal)
        # The DAG-code bundle as it is: the image runs the versions the functions run (one lock).
        image = ecs.ContainerImage.from_asset(str(bundle.context), file=DOCKERFILE, exclude=["lambda.Dockerfile"],
                                              platform=IMAGE_PLATFORMS[architecture])
        # Container-level cpu/memory equal to the task's: valid on Fargate, and moto's RunTask needs them.
        self.container = self.task_definition.add_container(
            names.ecs_container, container_name=names.ecs_container, image=image,
            cpu=settings.cpu, memory_limit_mib=settings.memory_mib,
            logging=ecs.LogDrivers.aws_logs(stream_prefix="worker", log_group=self.log_group))

    def _own_vpc(self, names: ResourceNames) -> ec2.Vpc:
        """The default: a VPC of the tasks' own, public subnets only, no NAT, free gateway endpoints."""
        vpc = ec2.Vpc(
            self, "Vpc", max_azs=2, nat_gateways=0,
            subnet_configuration=[ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC,
                                                          cidr_mask=24)],
            gateway_endpoints={"S3": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.S3),
                               "DynamoDB": ec2.GatewayVpcEndpointOptions(
                                   service=ec2.GatewayVpcEndpointAwsService.DYNAMODB)},
        )
        self._public_subnets = vpc.public_subnets
        self._security_group = ec2.SecurityGroup(
            self, "TaskSecurityGroup", vpc=vpc, allow_all_outbound=True,
            description=f"Updraft {names.environment} Fargate workers: egress only")
        return vpc

    @property
    def subnet_ids(self) -> list[str]:
        if self.network is not None:
            return self.network.subnet_ids
        return [subnet.subnet_id for subnet in self._public_subnets]

    @property
    def security_group_ids(self) -> list[str]:
        if self.network is not None:
            return self.network.security_group_ids
        return [self._security_group.security_group_id]

    @property
    def public_ip(self) -> bool:
        """Public subnets without NAT need a public IP to reach ECR and AWS's APIs; private subnets get none."""
        return self.network is None

    def task_definition_family_arn(self) -> str:
        """Every revision of the worker family: RunTask names the family, so each deploy's new revision is used."""
        return Stack.of(self).format_arn(service="ecs", resource="task-definition",
                                         resource_name=f"{self.names.ecs_task_family}:*",
                                         arn_format=ArnFormat.SLASH_RESOURCE_NAME)

    def run_task_statements(self) -> list[iam.PolicyStatement]:
        """What the Fargate executor needs: RunTask on the worker family in this cluster only, tagging the tasks
        it starts (RunTask with tags), and passing exactly the task's two roles to ECS."""
        tasks_in_cluster = Stack.of(self).format_arn(service="ecs", resource="task",
                                                     resource_name=f"{self.names.ecs_cluster}/*",
                                                     arn_format=ArnFormat.SLASH_RESOURCE_NAME)
        return [
            iam.PolicyStatement(sid="RunWorkerTask", actions=["ecs:RunTask"],
                                resources=[self.task_definition_family_arn()],
                                conditions={"ArnEquals": {"ecs:cluster": self.cluster.cluster_arn}}),
            iam.PolicyStatement(sid="TagWorkerTask", actions=["ecs:TagResource"], resources=[tasks_in_cluster],
                                conditions={"StringEquals": {"ecs:CreateAction": "RunTask"}}),
            iam.PolicyStatement(sid="PassWorkerTaskRoles", actions=["iam:PassRole"],
                                resources=[self.task_definition.task_role.role_arn,
                                           self.task_definition.obtain_execution_role().role_arn],
                                conditions={"StringEquals": {"iam:PassedToService": "ecs-tasks.amazonaws.com"}}),
        ]
