"""One environment's names and settings, read from environment variables in exactly one place.

Every Lambda handler, the Fargate worker, local mode and the CDK stack agree on these names: the stack writes
them with :meth:`UpdraftConfig.to_env`, handlers read them with :meth:`UpdraftConfig.from_env`. Nothing here
imports boto3 or pynamodb, so reading the configuration costs a cold start nothing.

Variables (all optional except where noted):

==============================  ===================================================================
``UPDRAFT_TABLE``               the store's DynamoDB table (required by every handler that uses the store)
``AWS_REGION``                  set by Lambda; ``AWS_DEFAULT_REGION`` is the fallback (required)
``UPDRAFT_BUCKET``              DAG files under ``UPDRAFT_DAGS_PREFIX``, large items, logs
``UPDRAFT_DAGS_PREFIX``         default ``dags/``
``AWS_ENDPOINT_URL``            boto3's own variable: local mode's embedded AWS for every client; unset on AWS
``UPDRAFT_DYNAMODB_ENDPOINT``   the store's DynamoDB endpoint when it differs (defaults to ``AWS_ENDPOINT_URL``)
``UPDRAFT_WORKER_FUNCTION``     the worker Lambda the scheduler invokes for ``executor="lambda"`` tasks
``UPDRAFT_SCHEDULER_FUNCTION``  the scheduler Lambda, invoked asynchronously to look at a new run at once
``UPDRAFT_DEFERRAL_STATE_MACHINE`` the Step Functions state machine (ARN) deferred tries wait on (unset: a
                               deferred try is resumed by the scheduler's backstop, late)
``UPDRAFT_LOCAL_COMPUTE``       local mode only: the socket where its Lambda invokes and ECS RunTasks go
``UPDRAFT_ECS_CLUSTER``         Fargate tasks: cluster, task definition, container name, subnets and
``UPDRAFT_ECS_TASK_DEFINITION`` security groups (comma-separated), and whether to assign a public IP
``UPDRAFT_ECS_CONTAINER``       (``ENABLED``/``DISABLED``; a public subnet without NAT needs ``ENABLED``)
``UPDRAFT_ECS_SUBNETS``
``UPDRAFT_ECS_SECURITY_GROUPS``
``UPDRAFT_ECS_PUBLIC_IP``
``UPDRAFT_PLUGINS_FOLDER``      Airflow plugins (custom timetables) the parser, scheduler and workers load
``UPDRAFT_TICK_SECONDS``        how often the scheduler ticks (EventBridge rate on AWS, the local loop)
``UPDRAFT_SCHEDULER_MEMORY_MB`` the scheduler function's memory, which the environment's idle cost is priced with
                                (``updraft.cost.idle``); unset: 1024
``UPDRAFT_PARALLELISM``         Airflow's ``[core] parallelism`` and the two per-loop scheduler limits
``UPDRAFT_MAX_DAGRUNS_TO_CREATE_PER_LOOP``
``UPDRAFT_MAX_DAGRUNS_PER_LOOP_TO_SCHEDULE``
``UPDRAFT_METRICS_NAMESPACE``   CloudWatch namespace of the handlers' metrics, default ``Updraft``
``UPDRAFT_METRICS_FILE``        where Airflow's metrics (``updraft.metrics``) are appended as EMF lines (local mode:
                                ``$UPDRAFT_HOME/metrics/<environment>.emf``); unset: stdout on Lambda
                                (``AWS_LAMBDA_FUNCTION_NAME`` set), where CloudWatch extracts them, else nowhere
``UPDRAFT_TRACES_FILE``         where the runs' X-Ray segment documents (``updraft.traces``) are appended (local
                                mode: ``$UPDRAFT_HOME/traces/<environment>.xray``); unset: the X-Ray daemon at
                                ``AWS_XRAY_DAEMON_ADDRESS`` (set by Lambda's active tracing), else nowhere
``UPDRAFT_KMS_KEY``             the KMS key that encrypts variables and connections in the table (unset: stored
                                as written, under the table's own encryption only)
``AIRFLOW__SECRETS__BACKEND``   Airflow's ``[secrets] backend`` and ``backend_kwargs`` (Secrets Manager or SSM),
``AIRFLOW__SECRETS__BACKEND_KWARGS``  read by :mod:`updraft.secrets` where a task runs
``UPDRAFT_TASK_LOG_GROUP``      the CloudWatch Logs group of task logs (a stream per try); unset: the bucket's
                                ``logs/`` (local mode and ``dags test`` keep files or S3)
``UPDRAFT_TASK_LOG_MAX_BYTES``  the most a try's log keeps (UTF-8 bytes, default 50 MiB, at least 16 KiB): past it the
                                log keeps its beginning and its last MiB, with a line saying how many bytes were
                                left out between (``runtime.log_limit``); the try goes on and ends as it would
``UPDRAFT_USER_POOL_CLIENT_ID`` the Cognito app client ``POST /auth/token`` logs users in with; unset: no users
                                (local mode's default: every caller is admin)
``UPDRAFT_IAM_CALLER_ROLE``     the Airflow role of every SigV4 (IAM) caller of the API, default ``ADMIN``
``UPDRAFT_EMAIL_FROM``          the verified SES identity email is sent from (``email_on_failure``,
                                ``send_email``); unset: no email is sent, and a task's alert logs why
``UPDRAFT_BASE_URL``            the web address of the environment, for links in alerts (``ti.log_url``);
                                Airflow's ``[api] base_url`` default when unset
``UPDRAFT_DAG_CODE_ROLE``       the IAM role user code runs with (DAG files at parse time, tasks): the worker and
                                the parser assume it and give user code only its credentials; unset: none
``UPDRAFT_DAGS_PAUSED_AT_CREATION``  Airflow's ``[core] dags_are_paused_at_creation`` (``true``/``false``,
                                default true): whether a DAG first parsed starts paused
``UPDRAFT_WORK_DIR``            where the parser and the workers mirror the DAG files; unset: the system's
                                temporary folder (Lambda's ``/tmp``, its container's own). Local mode sets a
                                private folder under its state dir or ``$UPDRAFT_HOME``, never a shared path
``AIRFLOW__API__EXPOSE_CONFIG`` Airflow's ``[api] expose_config``: whether ``GET /config`` (and the UI's Config
                                page) shows the Airflow options these settings stand for
                                (:meth:`UpdraftConfig.airflow_options`, sensitive ones masked); unset or ``False``: a
                                403, as Airflow's default
``UPDRAFT_PARSE_ATTEMPTS``      how many times the parser handles a DAG file whose handling failed (Updraft's
                                own failure, not the file's import error) before it records an import error
                                saying so, default 3
==============================  ===================================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from updraft.resources import DAGS_PREFIX, ECS_CONTAINER, METRICS_NAMESPACE

# A try's log limit: 50 MiB is about 50 PutLogEvents calls of 1 MiB at the try's end (a few seconds), what a
# 1 GiB worker holds a few copies of (the child's and the worker's, masked and encoded) beside the task, and what
# the API reads back from CloudWatch within its 25 s (at 1 MiB a GetLogEvents page). Twice that would not fit.
DEFAULT_TASK_LOG_MAX_BYTES = 50 * 1024 * 1024
MIN_TASK_LOG_MAX_BYTES = 16 * 1024
EXPOSE_CONFIG_VAR = "AIRFLOW__API__EXPOSE_CONFIG"
# Airflow's options marked ``sensitive`` in its config.yml among :meth:`UpdraftConfig.airflow_options`'s.
SENSITIVE_OPTIONS = frozenset({("secrets", "backend_kwargs")})
PARSE_ATTEMPTS = 3  # a DAG file's parse handling is tried this many times before an import error says it failed


class ConfigError(RuntimeError):
    """A required setting is missing or unreadable; the message names the variable."""


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from None
    if value < 1:
        raise ConfigError(f"{name} must be at least 1, got {value}")
    return value


def _task_log_max_bytes(env: Mapping[str, str]) -> int:
    value = _int(env, "UPDRAFT_TASK_LOG_MAX_BYTES", DEFAULT_TASK_LOG_MAX_BYTES)
    if value < MIN_TASK_LOG_MAX_BYTES:
        raise ConfigError(f"UPDRAFT_TASK_LOG_MAX_BYTES must be at least {MIN_TASK_LOG_MAX_BYTES}, got {value}")
    return value


def _expose_config(env: Mapping[str, str]) -> bool:
    """Airflow's ``[api] expose_config``: its booleans, and its deprecated ``non-sensitive-only`` as True (values
    are masked either way)."""
    raw = (env.get(EXPOSE_CONFIG_VAR) or "false").strip().lower()
    if raw in ("t", "true", "1", "non-sensitive-only"):
        return True
    if raw in ("f", "false", "0"):
        return False
    raise ConfigError(f'{EXPOSE_CONFIG_VAR} must be "True" or "False", got {raw!r}')


def _list(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in env.get(name, "").split(",") if part.strip())


@dataclass(frozen=True)
class UpdraftConfig:
    table: str | None = None
    region: str | None = None
    bucket: str | None = None
    dags_prefix: str = DAGS_PREFIX
    dynamodb_endpoint: str | None = None
    endpoint_url: str | None = None
    worker_function: str | None = None
    scheduler_function: str | None = None
    parser_function: str | None = None
    deferral_state_machine: str | None = None
    local_compute: str | None = None
    ecs_cluster: str | None = None
    ecs_task_definition: str | None = None
    ecs_container: str = ECS_CONTAINER
    ecs_subnets: tuple[str, ...] = ()
    ecs_security_groups: tuple[str, ...] = ()
    ecs_public_ip: bool = False
    plugins_folder: str | None = None
    tick_seconds: int = 60
    scheduler_memory_mb: int = 1024
    parallelism: int = 32
    max_dagruns_to_create_per_loop: int = 10
    max_dagruns_per_loop_to_schedule: int = 20
    metrics_namespace: str = METRICS_NAMESPACE
    metrics_file: str | None = None
    lambda_function: str | None = None  # AWS_LAMBDA_FUNCTION_NAME: set by Lambda, never by Updraft
    traces_file: str | None = None
    xray_daemon_address: str | None = None  # AWS_XRAY_DAEMON_ADDRESS: set by Lambda's active tracing
    task_log_group: str | None = None
    user_pool_client_id: str | None = None
    user_pool_id: str | None = None  # the pool whose tokens the web UI's session cookie holds
    user_pool_jwks_url: str | None = None  # its signing keys (default: Cognito's address; local mode: moto's)
    iam_caller_role: str = "ADMIN"
    email_from: str | None = None
    base_url: str | None = None
    kms_key: str | None = None
    secrets_backend: str | None = None
    secrets_backend_kwargs: str | None = None
    dags_are_paused_at_creation: bool = True
    dag_code_role: str | None = None
    task_log_max_bytes: int = DEFAULT_TASK_LOG_MAX_BYTES
    work_dir: str | None = None
    parse_attempts: int = PARSE_ATTEMPTS
    expose_config: bool = False
    # The interface VPC endpoints the environment's stack keeps, one per endpoint and subnet (each billed by the
    # hour): the idle cost (``updraft.cost.idle``) prices them. 0: none (the default networking).
    interface_endpoint_azs: int = 0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> UpdraftConfig:
        env = os.environ if env is None else env
        prefix = env.get("UPDRAFT_DAGS_PREFIX") or DAGS_PREFIX
        return cls(
            table=env.get("UPDRAFT_TABLE") or None,
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
            bucket=env.get("UPDRAFT_BUCKET") or None,
            dags_prefix=prefix if prefix.endswith("/") else prefix + "/",
            dynamodb_endpoint=env.get("UPDRAFT_DYNAMODB_ENDPOINT") or env.get("AWS_ENDPOINT_URL") or None,
            endpoint_url=env.get("AWS_ENDPOINT_URL") or None,
            worker_function=env.get("UPDRAFT_WORKER_FUNCTION") or None,
            scheduler_function=env.get("UPDRAFT_SCHEDULER_FUNCTION") or None,
            parser_function=env.get("UPDRAFT_PARSER_FUNCTION") or None,
            deferral_state_machine=env.get("UPDRAFT_DEFERRAL_STATE_MACHINE") or None,
            local_compute=env.get("UPDRAFT_LOCAL_COMPUTE") or None,
            ecs_cluster=env.get("UPDRAFT_ECS_CLUSTER") or None,
            ecs_task_definition=env.get("UPDRAFT_ECS_TASK_DEFINITION") or None,
            ecs_container=env.get("UPDRAFT_ECS_CONTAINER") or ECS_CONTAINER,
            ecs_subnets=_list(env, "UPDRAFT_ECS_SUBNETS"),
            ecs_security_groups=_list(env, "UPDRAFT_ECS_SECURITY_GROUPS"),
            ecs_public_ip=(env.get("UPDRAFT_ECS_PUBLIC_IP") or "").upper() == "ENABLED",
            plugins_folder=env.get("UPDRAFT_PLUGINS_FOLDER") or None,
            tick_seconds=_int(env, "UPDRAFT_TICK_SECONDS", 60),
            scheduler_memory_mb=_int(env, "UPDRAFT_SCHEDULER_MEMORY_MB", 1024),
            parallelism=_int(env, "UPDRAFT_PARALLELISM", 32),
            max_dagruns_to_create_per_loop=_int(env, "UPDRAFT_MAX_DAGRUNS_TO_CREATE_PER_LOOP", 10),
            max_dagruns_per_loop_to_schedule=_int(env, "UPDRAFT_MAX_DAGRUNS_PER_LOOP_TO_SCHEDULE", 20),
            metrics_namespace=env.get("UPDRAFT_METRICS_NAMESPACE") or METRICS_NAMESPACE,
            metrics_file=env.get("UPDRAFT_METRICS_FILE") or None,
            lambda_function=env.get("AWS_LAMBDA_FUNCTION_NAME") or None,
            traces_file=env.get("UPDRAFT_TRACES_FILE") or None,
            xray_daemon_address=env.get("AWS_XRAY_DAEMON_ADDRESS") or None,
            task_log_group=env.get("UPDRAFT_TASK_LOG_GROUP") or None,
            user_pool_client_id=env.get("UPDRAFT_USER_POOL_CLIENT_ID") or None,
            user_pool_id=env.get("UPDRAFT_USER_POOL_ID") or None,
            user_pool_jwks_url=env.get("UPDRAFT_USER_POOL_JWKS_URL") or None,
            iam_caller_role=env.get("UPDRAFT_IAM_CALLER_ROLE") or "ADMIN",
            email_from=env.get("UPDRAFT_EMAIL_FROM") or None,
            base_url=env.get("UPDRAFT_BASE_URL") or None,
            kms_key=env.get("UPDRAFT_KMS_KEY") or None,
            secrets_backend=env.get("AIRFLOW__SECRETS__BACKEND") or None,
            secrets_backend_kwargs=env.get("AIRFLOW__SECRETS__BACKEND_KWARGS") or None,
            dags_are_paused_at_creation=(env.get("UPDRAFT_DAGS_PAUSED_AT_CREATION") or "true").lower() != "false",
            dag_code_role=env.get("UPDRAFT_DAG_CODE_ROLE") or None,
            task_log_max_bytes=_task_log_max_bytes(env),
            work_dir=env.get("UPDRAFT_WORK_DIR") or None,
            parse_attempts=_int(env, "UPDRAFT_PARSE_ATTEMPTS", PARSE_ATTEMPTS),
            expose_config=_expose_config(env),
            interface_endpoint_azs=_int(env, "UPDRAFT_INTERFACE_ENDPOINT_AZS", 0),
        )

    def to_env(self) -> dict[str, str]:
        """The variables that give back this configuration (for the CDK stack, local mode, Fargate tasks)."""
        out = {
            "UPDRAFT_TABLE": self.table, "AWS_REGION": self.region, "UPDRAFT_BUCKET": self.bucket,
            "UPDRAFT_DAGS_PREFIX": self.dags_prefix, "UPDRAFT_DYNAMODB_ENDPOINT": self.dynamodb_endpoint,
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "UPDRAFT_WORKER_FUNCTION": self.worker_function,
            "UPDRAFT_SCHEDULER_FUNCTION": self.scheduler_function, "UPDRAFT_LOCAL_COMPUTE": self.local_compute,
            "UPDRAFT_PARSER_FUNCTION": self.parser_function,
            "UPDRAFT_DEFERRAL_STATE_MACHINE": self.deferral_state_machine,
            "UPDRAFT_ECS_CLUSTER": self.ecs_cluster,
            "UPDRAFT_ECS_TASK_DEFINITION": self.ecs_task_definition, "UPDRAFT_ECS_CONTAINER": self.ecs_container,
            "UPDRAFT_ECS_SUBNETS": ",".join(self.ecs_subnets) or None,
            "UPDRAFT_ECS_SECURITY_GROUPS": ",".join(self.ecs_security_groups) or None,
            "UPDRAFT_ECS_PUBLIC_IP": "ENABLED" if self.ecs_public_ip else None,
            "UPDRAFT_PLUGINS_FOLDER": self.plugins_folder,
            "UPDRAFT_TICK_SECONDS": str(self.tick_seconds), "UPDRAFT_PARALLELISM": str(self.parallelism),
            "UPDRAFT_SCHEDULER_MEMORY_MB": None if self.scheduler_memory_mb == 1024 else str(self.scheduler_memory_mb),
            "UPDRAFT_MAX_DAGRUNS_TO_CREATE_PER_LOOP": str(self.max_dagruns_to_create_per_loop),
            "UPDRAFT_MAX_DAGRUNS_PER_LOOP_TO_SCHEDULE": str(self.max_dagruns_per_loop_to_schedule),
            "UPDRAFT_METRICS_NAMESPACE": self.metrics_namespace, "UPDRAFT_METRICS_FILE": self.metrics_file,
            "UPDRAFT_TRACES_FILE": self.traces_file,
            "UPDRAFT_TASK_LOG_GROUP": self.task_log_group,
            "UPDRAFT_USER_POOL_CLIENT_ID": self.user_pool_client_id, "UPDRAFT_IAM_CALLER_ROLE": self.iam_caller_role,
            "UPDRAFT_USER_POOL_ID": self.user_pool_id, "UPDRAFT_USER_POOL_JWKS_URL": self.user_pool_jwks_url,
            "UPDRAFT_EMAIL_FROM": self.email_from,
            "UPDRAFT_BASE_URL": self.base_url,
            "UPDRAFT_KMS_KEY": self.kms_key,
            "AIRFLOW__SECRETS__BACKEND": self.secrets_backend,
            "AIRFLOW__SECRETS__BACKEND_KWARGS": self.secrets_backend_kwargs,
            "UPDRAFT_DAGS_PAUSED_AT_CREATION": None if self.dags_are_paused_at_creation else "false",
            "UPDRAFT_DAG_CODE_ROLE": self.dag_code_role,
            "UPDRAFT_TASK_LOG_MAX_BYTES": None if self.task_log_max_bytes == DEFAULT_TASK_LOG_MAX_BYTES
            else str(self.task_log_max_bytes),
            "UPDRAFT_WORK_DIR": self.work_dir,
            "UPDRAFT_PARSE_ATTEMPTS": None if self.parse_attempts == PARSE_ATTEMPTS else str(self.parse_attempts),
            EXPOSE_CONFIG_VAR: "True" if self.expose_config else None,
            "UPDRAFT_INTERFACE_ENDPOINT_AZS": str(self.interface_endpoint_azs) if self.interface_endpoint_azs else None,
        }
        return {name: value for name, value in out.items() if value is not None}

    def airflow_options(self) -> dict[str, dict[str, str]]:
        """The Airflow options these settings stand for, ``{section: {key: value}}`` with values written as
        Airflow's configuration writes them, in Airflow's section order; an option whose setting is unset is left
        out (its default is Airflow's). Options Updraft does not read are not here: nothing else stands for them.
        Sensitive ones (:data:`SENSITIVE_OPTIONS`) hold their real value: whoever shows them masks them."""
        options: dict[str, dict[str, str | None]] = {
            "core": {"dags_folder": f"s3://{self.bucket}/{self.dags_prefix}" if self.bucket else None,
                     "plugins_folder": self.plugins_folder, "parallelism": str(self.parallelism),
                     "dags_are_paused_at_creation": str(self.dags_are_paused_at_creation)},
            "secrets": {"backend": self.secrets_backend, "backend_kwargs": self.secrets_backend_kwargs},
            "api": {"base_url": self.base_url, "expose_config": str(self.expose_config)},
            "email": {"from_email": self.email_from},
            "scheduler": {"max_dagruns_to_create_per_loop": str(self.max_dagruns_to_create_per_loop),
                          "max_dagruns_per_loop_to_schedule": str(self.max_dagruns_per_loop_to_schedule)},
        }
        return {section: {key: value for key, value in values.items() if value is not None}
                for section, values in options.items() if any(v is not None for v in values.values())}

    @property
    def fargate_configured(self) -> bool:
        return bool(self.ecs_cluster and self.ecs_task_definition and self.ecs_subnets)

    def mirror_folder(self, name: str) -> str:
        """The folder a DAG-file mirror called ``name`` lives in: under ``UPDRAFT_WORK_DIR`` when set (local mode's
        private folder), else in the system's temporary folder (on Lambda, ``/tmp`` is the container's own)."""
        import tempfile

        return os.path.join(self.work_dir or tempfile.gettempdir(), name)

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for boto3 clients: the region, the embedded AWS's endpoint in local mode, and the
        retries every call gets (``updraft.aws_clients``)."""
        # lazy: cold start (botocore only when a client is made; the configuration is read below every layer)
        from updraft.aws_clients import client_config

        kwargs: dict[str, Any] = {"config": client_config()}
        if self.region:
            kwargs["region_name"] = self.region
        if self.endpoint_url:
            kwargs["endpoint_url"] = self.endpoint_url
        return kwargs
