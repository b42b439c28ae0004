"""The physical names of one environment's AWS resources, decided in one place.

The CDK stack names what it deploys with these, and local mode creates the same resources under the same
names on its embedded AWS, so a handler, a log line or a CLI command reads the same in both worlds. No CDK,
boto3 or pynamodb import: the CDK app, the handlers and the CLI all load this for nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The bucket's three prefixes, kept apart so that the parser (notified of ``dags/*.py`` only) never sees what the
# store and the task logs write. UPDRAFT_DAGS_PREFIX may move the first; the other two are fixed.
DAGS_PREFIX = "dags/"
# Objects created under this prefix become asset events (updraft.scheduling.asset_sources).
ASSET_EVENTS_PREFIX = "asset-events/"
LOGS_PREFIX = "logs/"
STORE_PREFIX = "store/"  # values too large for a DynamoDB item (serialized DAG versions, XComs)
ECS_CONTAINER = "worker"  # the worker container in the Fargate task definition
METRICS_NAMESPACE = "Updraft"  # the handlers' CloudWatch metrics, unless UPDRAFT_METRICS_NAMESPACE says otherwise
LOCAL_ENVIRONMENT = "local"
# moto accepts any 12 digits; this is the account its server reports for every request.
LOCAL_ACCOUNT = "123456789012"
# moto accepts any credentials; local mode sets these so boto3 never looks for real ones.
LOCAL_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "updraft-local", "AWS_SECRET_ACCESS_KEY": "updraft-local"}

_ENV_NAME = re.compile(r"^[a-z][a-z0-9-]{0,19}$")


@dataclass(frozen=True)
class ResourceNames:
    environment: str
    account: str = LOCAL_ACCOUNT
    region: str = "us-east-1"

    def __post_init__(self) -> None:
        if not _ENV_NAME.match(self.environment):
            raise ValueError(f"environment name {self.environment!r} must be 1-20 of a-z, 0-9 and '-', "
                             f"starting with a letter (it becomes part of bucket and function names)")

    @property
    def prefix(self) -> str:
        return f"updraft-{self.environment}"

    @property
    def table(self) -> str:
        return f"{self.prefix}-state"

    @property
    def bucket(self) -> str:
        """Bucket names are global across accounts, so the account and region make this one unique."""
        return f"{self.prefix}-{self.account}-{self.region}"

    @property
    def dag_code_role(self) -> str:
        """The role user code runs with (the stack's ``DagCodeRole``; local mode creates one of this name)."""
        return f"{self.prefix}-dag-code"

    @property
    def parser_function(self) -> str:
        return f"{self.prefix}-parser"

    @property
    def scheduler_function(self) -> str:
        return f"{self.prefix}-scheduler"

    @property
    def worker_function(self) -> str:
        return f"{self.prefix}-worker"

    @property
    def api_function(self) -> str:
        return f"{self.prefix}-api"

    @property
    def asset_events_function(self) -> str:
        return f"{self.prefix}-asset-events"

    @property
    def trigger_check_function(self) -> str:
        return f"{self.prefix}-trigger-check"

    @property
    def worker_dlq(self) -> str:
        return f"{self.prefix}-worker-dlq"

    @property
    def dag_events_queue(self) -> str:
        """Local mode only: moto drops S3 -> Lambda notifications, so the bucket notifies this queue instead."""
        return f"{self.prefix}-dag-events"

    @property
    def ecs_cluster(self) -> str:
        return f"{self.prefix}-cluster"

    @property
    def ecs_task_family(self) -> str:
        return f"{self.prefix}-worker"

    @property
    def ecs_container(self) -> str:
        return ECS_CONTAINER

    @property
    def deferral_state_machine(self) -> str:
        return f"{self.prefix}-deferrals"

    @property
    def tick_rule(self) -> str:
        return f"{self.prefix}-tick"

    @property
    def task_log_group(self) -> str:
        """CloudWatch Logs group of task logs on AWS (a stream per try); local mode keeps them in files or S3."""
        return f"{self.prefix}-task-logs"

    @property
    def deferral_log_group(self) -> str:
        """The deferral state machine's log group: under ``/aws/vendedlogs/``, as AWS recommends for Step Functions
        (log delivery then needs no entry in the account's CloudWatch Logs resource policy, whose 5,120-character
        limit each group outside that prefix would eat into until deliveries fail to be created)."""
        return f"/aws/vendedlogs/states/{self.deferral_state_machine}"
