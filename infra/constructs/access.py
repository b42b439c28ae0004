"""The IAM statements Updraft's roles are assembled from, kept in one place so that each role's policy reads as a
short list of named grants (infra/README.md has the table per function).

Every statement names this environment's own resources: the table and its indexes, one prefix of the bucket,
the task log group, the worker function by its physical name. Nothing here is granted on ``*`` but the network
interfaces a function in a VPC needs (``manage_vpc_interfaces``: AWS documents them on ``*`` only).
"""

from __future__ import annotations

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_dynamodb as ddb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from constructs import Construct

from updraft.resources import DAGS_PREFIX, STORE_PREFIX

TABLE_READ_WRITE = ("dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem",
                    "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem",
                    "dynamodb:ConditionCheckItem")


def table_read_write(table: ddb.ITable) -> iam.PolicyStatement:
    return iam.PolicyStatement(sid="TableReadWrite", actions=list(TABLE_READ_WRITE),
                               resources=[table.table_arn, f"{table.table_arn}/index/*"])


def store_objects(bucket: s3.IBucket) -> iam.PolicyStatement:
    """The store's large items (serialized DAG versions, XComs) under ``store/``."""
    return iam.PolicyStatement(sid="StoreObjects", actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
                               resources=[bucket.arn_for_objects(f"{STORE_PREFIX}*")])


def read_store_objects(bucket: s3.IBucket) -> iam.PolicyStatement:
    """The store's large items, read only: the API reads DAG versions and XComs the parser and workers wrote."""
    return iam.PolicyStatement(sid="ReadStoreObjects", actions=["s3:GetObject"],
                               resources=[bucket.arn_for_objects(f"{STORE_PREFIX}*")])


def read_dag_files(bucket: s3.IBucket) -> list[iam.PolicyStatement]:
    """DAG code: only the parser and the workers (Lambda and Fargate) may read it."""
    return [
        iam.PolicyStatement(sid="ReadDagFiles", actions=["s3:GetObject"],
                            resources=[bucket.arn_for_objects(f"{DAGS_PREFIX}*")]),
        iam.PolicyStatement(sid="ListDagFiles", actions=["s3:ListBucket"], resources=[bucket.bucket_arn],
                            conditions={"StringLike": {"s3:prefix": [f"{DAGS_PREFIX}*"]}}),
    ]


def read_dag_source(bucket: s3.IBucket) -> iam.PolicyStatement:
    """The API shows a DAG's source (``GET /dagSources``) as the version it was parsed from: it reads the text,
    and never imports or runs it (only the parser and the workers do)."""
    return iam.PolicyStatement(sid="ReadDagSource", actions=["s3:GetObject", "s3:GetObjectVersion"],
                               resources=[bucket.arn_for_objects(f"{DAGS_PREFIX}*")])


def write_task_logs(task_logs: logs.ILogGroup) -> iam.PolicyStatement:
    """A try's log: its own stream in the task log group (``CloudWatchLogSink``), created, written, and read back
    where the try goes on from an earlier part (a resumed deferral, a sensor's next poke, a hand-off to Fargate: the
    log continues from what that part wrote). The group's ARN is ``...:log-group:<name>:*``, the form IAM takes
    for these actions: this group's streams only. Nothing more: no other group, and the bucket's ``logs/`` prefix
    is local mode's alone."""
    return iam.PolicyStatement(sid="WriteTaskLogs",
                               actions=["logs:CreateLogStream", "logs:PutLogEvents", "logs:GetLogEvents"],
                               resources=[task_logs.log_group_arn])


def read_task_logs(task_logs: logs.ILogGroup) -> iam.PolicyStatement:
    """The API's logs route: a try's stream read back (``CloudWatchLogSink.read``), nothing written."""
    return iam.PolicyStatement(sid="ReadTaskLogs", actions=["logs:GetLogEvents"],
                               resources=[task_logs.log_group_arn])


def worker_data_access(table: ddb.ITable, bucket: s3.IBucket, task_logs: logs.ILogGroup
                       ) -> list[iam.PolicyStatement]:
    """What running a try needs, whether it runs in the worker Lambda or in a Fargate task."""
    return [table_read_write(table), store_objects(bucket), *read_dag_files(bucket), write_task_logs(task_logs)]


def function_arn(scope: Construct, function_name: str) -> str:
    """A function's ARN from its physical name, without a reference to the function resource: the worker's own
    role (and the Fargate task's) may then invoke the worker without a dependency cycle."""
    return Stack.of(scope).format_arn(service="lambda", resource="function", resource_name=function_name,
                                      arn_format=ArnFormat.COLON_RESOURCE_NAME)


def invoke_worker(scope: Construct, worker_function: str) -> iam.PolicyStatement:
    """The Lambda executor's async invoke (the scheduler's, and the mini scheduler's inside every worker)."""
    return iam.PolicyStatement(sid="InvokeWorker", actions=["lambda:InvokeFunction"],
                               resources=[function_arn(scope, worker_function)])


def invoke_scheduler(scope: Construct, scheduler_function: str) -> iam.PolicyStatement:
    """A worker hands a run with a fan-in to the scheduler (an async invoke) instead of reading it itself; a
    scheduler (or a worker's mini scheduler) asks scheduler invocations to claim shares of a wide run's tries."""
    return iam.PolicyStatement(sid="InvokeScheduler", actions=["lambda:InvokeFunction"],
                               resources=[function_arn(scope, scheduler_function)])


def invoke_parser(scope: Construct, parser_function: str) -> iam.PolicyStatement:
    """The scheduler has the parser evaluate a DAG file's custom timetables again (an async invoke)."""
    return iam.PolicyStatement(sid="InvokeParser", actions=["lambda:InvokeFunction"],
                               resources=[function_arn(scope, parser_function)])


def state_machine_arn(scope: Construct, state_machine: str) -> str:
    """The deferral state machine's ARN from its physical name (no reference: the worker's role may start it
    although the machine's definition refers to the worker)."""
    return Stack.of(scope).format_arn(service="states", resource="stateMachine", resource_name=state_machine,
                                      arn_format=ArnFormat.COLON_RESOURCE_NAME)


def start_deferrals(scope: Construct, state_machine: str) -> iam.PolicyStatement:
    """A try that defers starts its wait: an execution of the deferral state machine (workers only)."""
    return iam.PolicyStatement(sid="StartDeferrals", actions=["states:StartExecution"],
                               resources=[state_machine_arn(scope, state_machine)])


def stop_deferrals(scope: Construct, state_machine: str) -> iam.PolicyStatement:
    """A clear, a mark, a deletion (the API) or a dagrun timeout (the scheduler) ends a deferred try: its wait
    stops. Only this machine's executions."""
    executions = Stack.of(scope).format_arn(service="states", resource="execution",
                                            resource_name=f"{state_machine}:*",
                                            arn_format=ArnFormat.COLON_RESOURCE_NAME)
    return iam.PolicyStatement(sid="StopDeferrals", actions=["states:StopExecution"], resources=[executions])


def sweep_deferrals(scope: Construct, state_machine: str) -> list[iam.PolicyStatement]:
    """The scheduler's deferral sweep (``scheduling.wait_sweep``): list the machine's running executions, describe
    one a deferred try should have, and start it again when its start was lost. Only this machine's."""
    executions = Stack.of(scope).format_arn(service="states", resource="execution",
                                            resource_name=f"{state_machine}:*",
                                            arn_format=ArnFormat.COLON_RESOURCE_NAME)
    return [start_deferrals(scope, state_machine),
            iam.PolicyStatement(sid="ListDeferrals", actions=["states:ListExecutions"],
                                resources=[state_machine_arn(scope, state_machine)]),
            iam.PolicyStatement(sid="DescribeDeferrals", actions=["states:DescribeExecution"],
                                resources=[executions])]


def send_email(scope: Construct, sender: str) -> iam.PolicyStatement:
    """Email alerts and ``send_email`` from tasks and DAG callbacks: ``ses:SendEmail`` only, from the environment's
    sender (the address's identity, or its domain's if that is the verified one), with that From address only."""
    domain = sender.rpartition("@")[2]
    identities = [Stack.of(scope).format_arn(service="ses", resource="identity", resource_name=name)
                  for name in (sender, domain)]
    return iam.PolicyStatement(sid="SendEmail", actions=["ses:SendEmail"], resources=identities,
                               conditions={"StringEquals": {"ses:FromAddress": sender}})
def secrets_key(key: kms.IKey) -> iam.PolicyStatement:
    """Variables and connections in the table: encrypted on write, decrypted on read (workers and the API)."""
    return iam.PolicyStatement(sid="SecretsKey", actions=["kms:Encrypt", "kms:Decrypt"], resources=[key.key_arn])


def read_secrets_backend(scope: Construct, backend: str, kwargs: dict[str, object]) -> list[iam.PolicyStatement]:
    """Reading the configured secrets backend: exactly the secrets under its connections and variables prefixes
    (the provider's defaults when not given). A prefix set to None reads nothing; an empty prefix would mean every
    secret of the account, which is refused."""
    import json

    from updraft.secrets.aws_backends import SecretsManagerBackend, build_backend

    reader = build_backend(backend, json.dumps(kwargs), lambda *_: None)
    stack = Stack.of(scope)
    resources = []
    for kind in ("connections", "variables"):
        prefix = reader.prefixes[kind]
        if prefix is None:
            continue
        if not prefix.strip("/"):
            raise ValueError(f"secrets backend {kind}_prefix is empty: the workers would read every secret of the "
                             "account; give the secrets a prefix")
        if isinstance(reader, SecretsManagerBackend):
            resources.append(stack.format_arn(service="secretsmanager", resource="secret",
                                              resource_name=f"{prefix}{reader.sep}*",
                                              arn_format=ArnFormat.COLON_RESOURCE_NAME))
        else:
            resources.append(stack.format_arn(service="ssm", resource="parameter",
                                              resource_name=f"{prefix.lstrip('/')}/*",
                                              arn_format=ArnFormat.SLASH_RESOURCE_NAME))
    if not resources:
        return []
    action = "secretsmanager:GetSecretValue" if isinstance(reader, SecretsManagerBackend) else "ssm:GetParameter"
    return [iam.PolicyStatement(sid="ReadSecretsBackend", actions=[action], resources=resources)]


# What Lambda needs in a function's role to attach it to a VPC (the EC2 statement of AWS's managed
# AWSLambdaVPCAccessExecutionRole): it creates, describes and deletes the function's network interfaces with them.
VPC_INTERFACES = ("ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets",
                  "ec2:DeleteNetworkInterface", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses")


def manage_vpc_interfaces() -> iam.PolicyStatement:
    """On ``*``, as AWS's managed policy grants it (the Describe actions have no resource-level permissions; Lambda
    creates and deletes the interfaces in the subnets and groups the settings name). The managed policy itself is
    not attached: it would also grant writing every log group."""
    return iam.PolicyStatement(sid="VpcNetworkInterfaces", actions=list(VPC_INTERFACES), resources=["*"])
