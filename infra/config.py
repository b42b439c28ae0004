"""Per-environment settings of the CDK app, in one place (``cdk synth -c env=dev|staging|prod``).

Plain dataclasses with no CDK import, so tests and tools can read them without loading jsii.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The placeholder account and region the app synthesizes for when none is given: cdk.json carries their AZ context
# so that nothing ever looks them up (see shared/notes/aws-offline.md, section 1.2).
PLACEHOLDER_ACCOUNT = "123456789012"
PLACEHOLDER_REGION = "us-east-1"

# What the Lambda bundles and the Fargate worker image install next to the code, as resolved into the committed
# infra/requirements.lock (`python -m infra.packages` after a change here: the bundles install the lock, not these).
# boto3 is included although the Lambda runtime has one: pynamodb pulls botocore into the bundle, which would
# otherwise shadow the runtime's botocore under a boto3 of another release. python-dateutil stays <3 for botocore.
LAMBDA_REQUIREMENTS = (
    # as in pyproject.toml: aiobotocore (deferrable amazon operators) must install beside them
    "boto3>=1.34,<1.43.118",
    "botocore<1.43.118",
    "aws-lambda-powertools>=3.0",
    "pendulum>=3.0",
    "croniter>=3.0",
    "cron-descriptor>=1.4",
    "pynamodb>=6.0",
    "jsonschema>=4.0",
    "jinja2>=3.1",
    "python-dateutil>=2.8,<3",
    # virtualenv tasks' serializer="cloudpickle" / "dill" (updraft.operators.python_venv); capped as in pyproject.toml
    "cloudpickle>=2.2,<=3.1.2",
    "dill>=0.3",
    "universal-pathlib>=0.3.10",  # ObjectStoragePath in task code (pulls fsspec)
)


# API Gateway's REST integration timeout (its default and, without a quota increase, its maximum): past it the
# caller gets the gateway's 504, whatever the function does. The API function must time out before it.
API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS = 29


@dataclass(frozen=True)
class FunctionSettings:
    memory_mib: int
    timeout_seconds: int
    # Opt-in (infra/README.md, "Reserved concurrency"): None, the default, runs in the account's unreserved pool.
    # A number reserves that many executions out of the account's quota, and CloudFormation refuses it at CREATE
    # unless the quota keeps 100 unreserved beyond every reservation (new accounts often start with less).
    reserved_concurrency: int | None = None


@dataclass(frozen=True)
class FargateSettings:
    cpu: int = 512
    memory_mib: int = 1024


@dataclass(frozen=True)
class SecretsSettings:
    """Airflow's ``[secrets] backend`` and ``backend_kwargs`` for the environment's tasks: one of the Amazon
    provider's backends (Secrets Manager or SSM Parameter Store) by its class path. The workers' roles may read
    exactly the secrets under its connections and variables prefixes, nothing else."""

    backend: str
    kwargs: dict[str, object] = field(default_factory=dict)


# The interface VPC endpoints (``com.amazonaws.<region>.<name>``) every function that runs DAG code, and the Fargate
# task, call Updraft's AWS APIs through in an existing VPC without a NAT (``ExistingVpc.create_endpoints``): the
# worker invokes functions (lambda), starts and stops deferrals (states), writes task logs (logs; also the Fargate
# task's awslogs driver), runs Fargate tasks (ecs), decrypts variables and connections (kms), and the parser, the
# workers and the trigger check assume the DAG-code role (sts); the Fargate task pulls its image (ecr.api,
# ecr.dkr; its layers come from S3 through the gateway endpoint). DynamoDB and S3 are free gateway endpoints.
INTERFACE_ENDPOINTS = ("lambda", "states", "logs", "ecs", "ecr.api", "ecr.dkr", "kms", "sts")
GATEWAY_ENDPOINTS = ("dynamodb", "s3")


@dataclass(frozen=True)
class ExistingVpc:
    """An existing VPC the functions that run DAG code (parser, worker, trigger check) and the Fargate tasks run
    in, as MWAA's environment runs in its customer's VPC: private subnets (no public IP), so a task reaches a
    database in them. Given by ids only: synth looks nothing up.

    ``private_subnet_ids``: one subnet per AZ (the interface endpoints take one subnet per AZ; give two or more for
    Lambda's availability). ``route_table_ids``: those subnets' route tables, where the DynamoDB and S3 gateway
    endpoints add their routes (needed when ``create_endpoints``). ``security_group_ids``: the groups the functions
    and tasks get; none: the stack creates one allowing all egress and no ingress. ``create_endpoints``: create the
    endpoints of :func:`EnvironmentSettings.interface_endpoints` and the two gateway endpoints; False when the VPC
    already reaches AWS's APIs (its own endpoints, or a NAT).
    """

    vpc_id: str
    private_subnet_ids: tuple[str, ...]
    route_table_ids: tuple[str, ...] = ()
    security_group_ids: tuple[str, ...] = ()
    create_endpoints: bool = True

    def __post_init__(self) -> None:
        def check(kind: str, prefix: str, ids: tuple[str, ...]) -> None:
            bad = [i for i in ids if not re.fullmatch(rf"{prefix}([0-9a-f]{{8}}|[0-9a-f]{{17}})", i)]
            if isinstance(ids, str) or bad:
                raise ValueError(f"ExistingVpc {kind} must be a tuple of ids {prefix}<8 or 17 hex digits>, "
                                 f"got {ids!r}")

        check("vpc_id", "vpc-", (self.vpc_id,))
        check("private_subnet_ids", "subnet-", self.private_subnet_ids)
        check("route_table_ids", "rtb-", self.route_table_ids)
        check("security_group_ids", "sg-", self.security_group_ids)
        if not self.private_subnet_ids:
            raise ValueError("ExistingVpc needs at least one private subnet id (one per AZ; two or more advised)")
        if len(set(self.private_subnet_ids)) != len(self.private_subnet_ids):
            raise ValueError(f"ExistingVpc private_subnet_ids repeats a subnet: {self.private_subnet_ids!r}")
        if self.create_endpoints and not self.route_table_ids:
            raise ValueError("ExistingVpc with create_endpoints needs the private subnets' route_table_ids (the "
                             "DynamoDB and S3 gateway endpoints route through them); or create_endpoints=False "
                             "if the VPC already has its endpoints or a NAT")


@dataclass(frozen=True)
class EnvironmentSettings:
    name: str
    tick_minutes: int
    parser: FunctionSettings
    scheduler: FunctionSettings
    worker: FunctionSettings
    # Behind API Gateway: its timeout stays below the gateway's 29 s, so a slow request ends in the function's own
    # logged timeout error rather than a 504 that hides it (25 s leaves room for a cold start's init phase).
    api: FunctionSettings
    worker_retry_attempts: int  # async invokes: 0..2 (Lambda's bound)
    worker_max_event_age_seconds: int  # 60..21600
    fargate: FargateSettings
    log_retention_days: int  # one of CloudWatch's allowed values
    retain_data: bool  # RemovalPolicy.RETAIN for the table and the bucket
    parallelism: int = 32
    # Airflow's [core] dags_are_paused_at_creation: a DAG the parser sees for the first time starts paused unless
    # its file says otherwise (is_paused_upon_creation); `updraft --env NAME dags unpause` resumes it remotely.
    dags_are_paused_at_creation: bool = True
    # Airflow's [api] expose_config: whether GET /config and the UI's Config page show the Airflow options this
    # environment's settings stand for (sensitive ones masked); False: a 403, as Airflow's default.
    expose_config: bool = False
    tags: dict[str, str] = field(default_factory=dict)
    # The Airflow role of every caller of the IAM (SigV4) API. ADMIN: IAM policies already decide who may invoke
    # that API at all (execute-api:Invoke), and those are the deploying account's operators and automation, who
    # deploy DAGs anyway; set a lower role where IAM access is granted more widely than that.
    iam_caller_role: str = "ADMIN"
    # The verified SES identity (an address) email alerts and send_email go from; the worker and Fargate roles
    # get ses:SendEmail from it only. None: no email is sent (a task's alert logs why).
    email_sender: str | None = None
    secrets: SecretsSettings | None = None  # None: variables and connections from env vars and the table only
    # S3 uploads under the bucket's asset-events/ prefix, and messages on the queue named here (an existing SQS
    # queue's ARN; None: no queue), become asset events (updraft.scheduling.asset_sources), recorded by this Lambda.
    asset_events: FunctionSettings = field(default_factory=lambda: FunctionSettings(512, 60))
    asset_events_queue_arn: str | None = None
    # The deferral loop's look at a polling trigger (updraft.runtime.trigger_check): short, one look per invoke.
    trigger_check: FunctionSettings = field(default_factory=lambda: FunctionSettings(512, 30))
    # The environment's own requirements (MWAA's requirements.txt): a pip requirements file, relative to the
    # repository root or absolute; None: none. `cdk synth` installs it for the Lambda platform, against the lock
    # of Updraft's own packages, into what runs DAG code: the parser, worker and trigger-check functions and the
    # Fargate worker image (infra/README.md, "An environment's requirements").
    requirements: str | None = None
    # The functions' architecture, and so the manylinux wheels the bundles hold; the Fargate task runs on it too.
    architecture: str = "x86_64"
    # Networking (infra/README.md, "Networking"): None, the default, runs the functions outside any VPC and the
    # Fargate tasks in public subnets of a VPC of their own without NAT (idle cost ~0); an ExistingVpc runs the
    # functions that run DAG code and the Fargate tasks in its private subnets.
    vpc: ExistingVpc | None = None

    def interface_endpoints(self) -> tuple[str, ...]:
        """The interface endpoints the stack creates (none unless ``vpc.create_endpoints``): the base ones, the
        secrets backend's service and SES's API when the environment uses them. Each is billed per hour in each
        of the VPC's subnets (``updraft.cost.idle``)."""
        if self.vpc is None or not self.vpc.create_endpoints:
            return ()
        extra: list[str] = []
        if self.secrets is not None:
            from updraft.secrets.aws_backends import BACKEND_CLASSES

            backend = BACKEND_CLASSES.get(self.secrets.backend.strip())
            if backend is not None:
                extra.append(backend.service)
        if self.email_sender is not None:
            extra.append("email")
        return (*INTERFACE_ENDPOINTS, *extra)

    def interface_endpoint_azs(self) -> int:
        """What the interface endpoints are billed on: one per endpoint and subnet (AZ), by the hour."""
        return len(self.interface_endpoints()) * (len(self.vpc.private_subnet_ids) if self.vpc else 0)

    def __post_init__(self) -> None:
        if self.architecture not in ("x86_64", "arm64"):
            raise ValueError(f"environment {self.name!r}: architecture {self.architecture!r} is not one of "
                             "Lambda's x86_64, arm64")
        if self.iam_caller_role not in ("VIEWER", "USER", "OP", "ADMIN"):
            raise ValueError(f"environment {self.name!r}: iam_caller_role {self.iam_caller_role!r} is not one of "
                             "Airflow's roles VIEWER, USER, OP, ADMIN")
        if self.email_sender is not None and "@" not in self.email_sender:
            raise ValueError(f"environment {self.name!r}: email_sender must be an email address (a verified SES "
                             f"identity), got {self.email_sender!r}")
        if self.api.timeout_seconds >= API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS:
            raise ValueError(
                f"environment {self.name!r}: the API function's timeout ({self.api.timeout_seconds} s) must be below "
                f"API Gateway's integration timeout ({API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS} s), or the gateway's "
                "504 masks the function's own timeout error")
        # Lambda queues async invokes beyond a function's reserved concurrency in arrival order, not by priority:
        # claimed tries would wait there holding their pool and parallelism slots while a higher-priority try that
        # becomes ready later cannot claim them. So the environment may claim no more tries than can run at once.
        reserved = self.worker.reserved_concurrency
        if reserved is not None and reserved < self.parallelism:
            raise ValueError(
                f"environment {self.name!r}: the worker's reserved concurrency ({reserved}) is below parallelism "
                f"({self.parallelism}); tries beyond it would wait in Lambda's queue holding their slots, out of "
                "priority order. Raise the reserved concurrency or lower parallelism to at most it.")


ENVIRONMENTS: dict[str, EnvironmentSettings] = {
    "dev": EnvironmentSettings(
        name="dev", tick_minutes=1,
        parser=FunctionSettings(512, 120), scheduler=FunctionSettings(512, 60, None),
        worker=FunctionSettings(1024, 900), api=FunctionSettings(512, 25),
        worker_retry_attempts=0, worker_max_event_age_seconds=3600,
        fargate=FargateSettings(512, 1024), log_retention_days=7, retain_data=False, parallelism=8,
    ),
    "staging": EnvironmentSettings(
        name="staging", tick_minutes=1,
        parser=FunctionSettings(1024, 300), scheduler=FunctionSettings(1024, 60, None),
        worker=FunctionSettings(2048, 900), api=FunctionSettings(1024, 25),
        worker_retry_attempts=1, worker_max_event_age_seconds=3600,
        fargate=FargateSettings(1024, 2048), log_retention_days=30, retain_data=True, parallelism=32,
    ),
    "prod": EnvironmentSettings(
        name="prod", tick_minutes=1,
        parser=FunctionSettings(1024, 300), scheduler=FunctionSettings(1769, 60, None),
        worker=FunctionSettings(2048, 900), api=FunctionSettings(1024, 25),
        worker_retry_attempts=2, worker_max_event_age_seconds=21600,
        fargate=FargateSettings(2048, 4096), log_retention_days=365, retain_data=True, parallelism=128,
    ),
}


def settings_for(env: str | None) -> EnvironmentSettings:
    """The settings of ``env`` (default ``dev``); a clear error for an unknown name."""
    name = env or "dev"
    try:
        return ENVIRONMENTS[name]
    except KeyError:
        raise ValueError(f"unknown environment {name!r}: expected one of {', '.join(ENVIRONMENTS)}") from None
