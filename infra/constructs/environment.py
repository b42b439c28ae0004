"""``UpdraftEnvironment``: one whole Updraft deployment, embeddable in any CDK stack."""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack
from constructs import Construct

from infra.config import EnvironmentSettings
from infra.constructs.api import UpdraftApi
from infra.constructs.compute import RETENTION, UpdraftFunctions
from infra.constructs.data import UpdraftData
from infra.constructs.deferrals import DeferralStateMachine
from infra.constructs.fargate import FargateWorkers
from updraft.resources import ResourceNames


class UpdraftEnvironment(Construct):
    """The data (table, bucket), the compute (parser, scheduler, worker and API Lambdas, Fargate workers), the
    deferral state machine and the REST API of one environment. Physical names come from
    ``updraft.resources.ResourceNames``, so they match local mode's.

    ``bundle_dependencies=False`` bundles the code without pip-installing its dependencies (tests only).
    """

    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings,
                 bundle_dependencies: bool = True) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        self.names = ResourceNames(settings.name, stack.account, stack.region)
        retention = RETENTION[settings.log_retention_days]
        removal = RemovalPolicy.RETAIN if settings.retain_data else RemovalPolicy.DESTROY
        self.data = UpdraftData(self, "Data", retain=settings.retain_data, names=self.names)
        self.fargate = FargateWorkers(self, "Fargate", names=self.names, settings=settings.fargate,
                                      retention=retention, removal=removal)
        self.functions = UpdraftFunctions(self, "Functions", data=self.data, fargate=self.fargate, names=self.names,
                                          settings=settings, bundle_dependencies=bundle_dependencies)
        self.deferrals = DeferralStateMachine(self, "Deferrals", names=self.names, worker=self.functions.worker,
                                              check=self.functions.trigger_check,
                                              retention=retention, removal=removal)
        self.api = UpdraftApi(self, "Api", names=self.names, handler=self.functions.api,
                              iam_caller_role=settings.iam_caller_role, retain_users=settings.retain_data)
