"""``UpdraftEnvironment``: one whole Updraft deployment, embeddable in any CDK stack."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import RemovalPolicy, Stack, Stage
from constructs import Construct

from infra.config import EnvironmentSettings
from infra.constructs.api import UpdraftApi
from infra.constructs.bundling import BUILD_FOLDER, ZIP_LIMIT_BYTES, build
from infra.constructs.compute import RETENTION, UpdraftFunctions
from infra.constructs.dashboard import UpdraftDashboard
from infra.constructs.data import UpdraftData
from infra.constructs.deferrals import DeferralStateMachine
from infra.constructs.fargate import FargateWorkers
from infra.constructs.network import PrivateNetwork
from infra.packages import resolve
from updraft.resources import ResourceNames


class UpdraftEnvironment(Construct):
    """The data (table, bucket), the network when the settings give an existing VPC, the compute (parser,
    scheduler, worker and API Lambdas, Fargate workers), the deferral state machine, the REST API and the
    CloudWatch dashboard of one environment. Physical names come from
    ``updraft.resources.ResourceNames``, so they match local mode's.

    The code is built at synth (``bundling``) from the environment's packages (``infra.packages``: Updraft's lock
    and the settings' requirements, installed for the Lambda platform; a conflict fails here, naming the
    packages). ``bundle_dependencies=False`` leaves Updraft's own packages out of the bundles (tests only: no
    index needed); ``zip_limit_bytes`` is the unzipped size past which DAG code's functions become container
    images (Lambda's 250 MB; tests lower it).
    """

    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings,
                 bundle_dependencies: bool = True, zip_limit_bytes: int = ZIP_LIMIT_BYTES) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        packages = resolve(settings)
        stage = Stage.of(self)
        assert stage is not None, "an environment is built inside an App"
        workdir = Path(stage.outdir) / BUILD_FOLDER
        bundles = {dag_code: build(packages, dag_code=dag_code, dependencies=bundle_dependencies,
                                   architecture=settings.architecture, workdir=workdir)
                   for dag_code in (False, True)}
        self.names = ResourceNames(settings.name, stack.account, stack.region)
        retention = RETENTION[settings.log_retention_days]
        removal = RemovalPolicy.RETAIN if settings.retain_data else RemovalPolicy.DESTROY
        self.data = UpdraftData(self, "Data", retain=settings.retain_data, names=self.names)
        # An existing VPC (settings.vpc) for what runs DAG code; None: the default networking (no VPC for the
        # functions, the Fargate tasks' own public subnets).
        self.network = PrivateNetwork(self, "Network", settings=settings, names=self.names) if settings.vpc else None
        self.fargate = FargateWorkers(self, "Fargate", names=self.names, settings=settings.fargate,
                                      retention=retention, removal=removal, bundle=bundles[True],
                                      architecture=settings.architecture, network=self.network)
        self.functions = UpdraftFunctions(self, "Functions", data=self.data, fargate=self.fargate, names=self.names,
                                          settings=settings, bundle=bundles[False], dag_bundle=bundles[True],
                                          zip_limit_bytes=zip_limit_bytes)
        self.deferrals = DeferralStateMachine(self, "Deferrals", names=self.names, worker=self.functions.worker,
                                              check=self.functions.trigger_check,
                                              retention=retention, removal=removal)
        self.api = UpdraftApi(self, "Api", names=self.names, handler=self.functions.api,
                              iam_caller_role=settings.iam_caller_role, retain_users=settings.retain_data)
        f = self.functions
        self.dashboard = UpdraftDashboard(
            self, "Dashboard", names=self.names, namespace=f.metrics_namespace,
            functions={"parser": f.parser, "scheduler": f.scheduler, "worker": f.worker, "api": f.api,
                       "trigger_check": f.trigger_check, "asset_events": f.asset_events},
            data=self.data, state_machine=self.deferrals.state_machine,
            alarms=[f.dead_letter_alarm, f.import_errors_alarm, f.scheduler_errors_alarm, f.parser_errors_alarm,
                    f.poison_pills_alarm])
