"""What a Lambda handler needs (clients, store, executor, scheduler, DAG loader, log sink), built on first use.

Handlers keep one ``Services`` per container. Each piece is created the first time it is asked for and then
reused by warm invocations, so a cold start pays only for what its event needs (boto3 alone is ~130 ms, each
client ~60 ms more: ``notes/aws-offline.md`` section 3), and the scheduler's cache of DAG versions survives
between ticks. Tests and local mode replace any piece by assigning it before first use (``services.executor =
RecordingExecutor()``); boto3 clients honour ``AWS_ENDPOINT_URL`` so local mode can point them all at its
embedded AWS.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, overload

from updraft.config import ConfigError, UpdraftConfig
from updraft.resources import LOGS_PREFIX
from updraft.store.config import StoreConfig

WORKER_MIRROR = "updraft-worker-dags"  # the workers' DAG-file mirror, in the work folder (``mirror_folder``)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_ecs import ECSClient
    from mypy_boto3_lambda import LambdaClient
    from mypy_boto3_logs import CloudWatchLogsClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient

    from updraft.executors.base import Executor
    from updraft.metrics.airflow import AirflowMetrics
    from updraft.parsing.options import ParseOptions
    from updraft.runtime.dag_code_credentials import DagCodeCredentials
    from updraft.runtime.loader import S3DagLoader
    from updraft.runtime.logs import LogSink
    from updraft.scheduling import Scheduler, SchedulerConfig, Share, Waits
    from updraft.store.api import Store
    from updraft.traces.run_traces import RunTraces

# The AWS services Updraft calls (the dev extra installs boto3's types for exactly these).
AwsService = Literal["cognito-idp", "dynamodb", "ecs", "kms", "lambda", "logs", "s3", "secretsmanager", "sqs", "ssm",
                     "stepfunctions", "sts"]


def store_settings(config: UpdraftConfig) -> StoreConfig:
    """The store's settings; raises ConfigError naming what is missing (a handler cannot guess a table). Here, not
    in ``updraft.config``: the configuration is read below every layer, the store's settings are the store's."""
    missing = [name for name, value in (("UPDRAFT_TABLE", config.table), ("AWS_REGION", config.region)) if not value]
    if missing:
        raise ConfigError(f"the store needs {' and '.join(missing)} in the environment")
    return StoreConfig(table_name=config.table, region=config.region,  # type: ignore[arg-type]
                       host=config.dynamodb_endpoint, s3_bucket=config.bucket, kms_key_id=config.kms_key)


def scheduler_settings(config: UpdraftConfig) -> SchedulerConfig:
    """The scheduler's limits and tick from the environment's configuration."""
    # lazy: cold start (the scheduler's package only where the scheduler runs)
    from updraft.scheduling import SchedulerConfig

    return SchedulerConfig(parallelism=config.parallelism,
                           max_dagruns_to_create_per_loop=config.max_dagruns_to_create_per_loop,
                           max_dagruns_per_loop_to_schedule=config.max_dagruns_per_loop_to_schedule,
                           tick_interval=dt.timedelta(seconds=config.tick_seconds))


class Services:
    def __init__(self, config: UpdraftConfig | None = None) -> None:
        self.config = config or UpdraftConfig.from_env()
        self._clients: dict[str, Any] = {}

    @overload
    def client(self, service: Literal["cognito-idp"]) -> Any: ...  # boto3-stubs' cognito-idp is not installed
    @overload
    def client(self, service: Literal["dynamodb"]) -> DynamoDBClient: ...
    @overload
    def client(self, service: Literal["ecs"]) -> ECSClient: ...
    @overload
    def client(self, service: Literal["lambda"]) -> LambdaClient: ...
    @overload
    def client(self, service: Literal["logs"]) -> CloudWatchLogsClient: ...
    @overload
    def client(self, service: Literal["s3"]) -> S3Client: ...
    @overload
    def client(self, service: Literal["sqs"]) -> SQSClient: ...
    @overload
    def client(self, service: Literal["kms", "secretsmanager", "ssm", "stepfunctions", "sts"]) -> Any: ...

    def client(self, service: AwsService) -> Any:
        """A boto3 client; in local mode, Lambda, ECS and Step Functions are local mode's own (moto cannot run
        code), which answer the calls Updraft makes as boto3's do (so they are typed as boto3's clients)."""
        if service not in self._clients:
            if self.config.local_compute and service in ("lambda", "ecs", "stepfunctions"):
                # lazy: local mode only (its compute clients)
                from updraft.executors.local_compute import local_client

                self._clients[service] = local_client(service, self.config.local_compute)
            else:
                import boto3

                kwargs = self.config.client_kwargs()
                if service in ("lambda", "ecs"):  # each of a claim pass's invoke threads holds a connection
                    from botocore.config import Config

                    # lazy: only the functions that dispatch tries build these clients
                    from updraft.scheduling import INVOKE_CONCURRENCY

                    kwargs["config"] = kwargs["config"].merge(Config(max_pool_connections=INVOKE_CONCURRENCY))
                self._clients[service] = boto3.client(service, **kwargs)
        return self._clients[service]

    def nudge_scheduler(self, dag_id: str, run_id: str) -> bool:
        """Ask the scheduler to look at one run now (a new manual run) instead of at its next tick.

        An asynchronous invoke with the task-finished envelope, which means "look at this run again"; without
        a scheduler function configured the tick still finds the run, so this is only ever a speed-up.
        """
        if not self.config.scheduler_function:
            return False
        self._invoke_scheduler(dag_id, run_id)
        return True

    def ask_claim_share(self, dag_id: str, run_id: str, share: Share) -> None:
        """Ask a scheduler invocation to claim ``share`` of a run's ready tries (``scheduling.claim_shares``): an
        asynchronous invoke of the scheduler function with the run's event naming the share."""
        self._invoke_scheduler(dag_id, run_id, share=share.to_detail())

    def _invoke_scheduler(self, dag_id: str, run_id: str, **detail: Any) -> None:
        import json

        # lazy: cold start (handler_events imports the executors; only the functions that invoke it need it)
        from updraft.handler_events import run_changed_event

        assert self.config.scheduler_function is not None
        self.client("lambda").invoke(FunctionName=self.config.scheduler_function, InvocationType="Event",
                                     Payload=json.dumps(run_changed_event(dag_id, run_id, **detail)).encode())

    @functools.cached_property
    def store(self) -> Store:
        # lazy: cold start (pynamodb and the store only when a handler asks for it)
        from updraft.store.dynamo import make_store

        store_config = store_settings(self.config)
        return make_store(store_config, s3_client=self.client("s3") if store_config.s3_bucket else None,
                          kms_client=lambda: self.client("kms"))

    @functools.cached_property
    def executor(self) -> Executor:
        """Lambda for ``executor="lambda"`` tasks, Fargate when a cluster is configured, routed per dispatch."""
        # lazy: cold start (the executors only in the handlers that dispatch)
        from updraft.executors.lambda_ import LambdaExecutor
        from updraft.executors.routing import RoutingExecutor

        if not self.config.worker_function:
            raise ConfigError("the scheduler needs UPDRAFT_WORKER_FUNCTION (the worker Lambda) in the environment")
        executors: dict[str, Any] = {"lambda": LambdaExecutor(self.client("lambda"), self.config.worker_function)}
        if self.config.fargate_configured:
            # lazy: cold start (Fargate only when configured)
            from updraft.executors.fargate import FargateExecutor

            executors["fargate"] = FargateExecutor(
                self.client("ecs"), self.config.ecs_cluster, self.config.ecs_task_definition,  # type: ignore[arg-type]
                self.config.ecs_subnets, self.config.ecs_security_groups, self.config.ecs_container,
                assign_public_ip=self.config.ecs_public_ip, environment=self.config.to_env())
        # The store only when a Lambda dispatch is routed (tasks that outgrew Lambda go to Fargate).
        return RoutingExecutor(executors, long_tasks=self._dags_long_tasks)

    def _dags_long_tasks(self, dag_ids: Iterable[str]) -> dict[tuple[str, str], dict[str, Any]]:
        return self.store.dags_long_tasks(dag_ids)

    @functools.cached_property
    def waits(self) -> Waits | None:
        """Where deferred tries wait: the deferral state machine's executions (None: none configured, and the
        scheduler's backstop resumes deferred tries once their wait is overdue)."""
        if not self.config.deferral_state_machine:
            return None
        # lazy: cold start (the deferral waits only when a state machine is configured)
        from updraft.executors.step_functions import StepFunctionsWaits

        return StepFunctionsWaits(lambda: self.client("stepfunctions"), self.config.deferral_state_machine)

    @functools.cached_property
    def parse_options(self) -> ParseOptions:
        """How the parser runs a DAG file: the defaults (timeout, memory limit) plus the plugins folder."""
        # lazy: the parser's settings; the other handlers import no parsing package
        from updraft.parsing.options import ParseOptions

        return ParseOptions(plugins_folder=self.config.plugins_folder)

    def evaluate_timetables(self, relative_fileloc: str) -> None:
        """Have the parser run a DAG file again, so its custom timetables are evaluated from where their runs stand
        (an asynchronous invoke with the S3 notification a re-upload would send: the parser's one entry point)."""
        import json

        # lazy: cold start (parsing.timetable_horizons only when a timetable is re-evaluated)
        from updraft.parsing.timetable_horizons import reparse_event

        if not self.config.parser_function or not self.config.bucket:
            raise ConfigError("asking the parser needs UPDRAFT_PARSER_FUNCTION and UPDRAFT_BUCKET")
        self.client("lambda").invoke(
            FunctionName=self.config.parser_function, InvocationType="Event",
            Payload=json.dumps(reparse_event(self.config.bucket, self.config.dags_prefix, relative_fileloc)).encode())

    @functools.cached_property
    def scheduler(self) -> Scheduler:
        # No plugins here: the scheduler runs no user code (a custom timetable is the parser's evaluation of it).
        # lazy: cold start (the scheduler only on its handlers' paths)
        from updraft.scheduling import Scheduler

        scheduler = Scheduler(self.store, self.executor, scheduler_settings(self.config), metrics=self.metrics,
                              traces=self.traces)
        scheduler.waits = self.waits
        if self.config.scheduler_function and not self.config.local_compute:
            # Not in local mode: its embedded AWS is one interpreter serving every request, where a share's
            # invocation only adds requests (measured: 1,000 claims in 10.8 s alone, 17.7 s in 8 shares).
            scheduler.claims.ask_share = self.ask_claim_share
        if self.config.parser_function and self.config.bucket:
            scheduler.evaluate_timetables = self.evaluate_timetables
        return scheduler

    @functools.cached_property
    def metrics(self) -> AirflowMetrics:
        """Airflow's metrics, as EMF lines: to ``UPDRAFT_METRICS_FILE`` when set (local mode), else to stdout on
        Lambda (its log group makes them CloudWatch metrics), else nowhere (``config``'s table)."""
        # lazy: cold start (metrics built on first use)
        from updraft.metrics.airflow import AirflowMetrics
        from updraft.metrics.emf import EmfWriter, FileLines, MetricLines, StdoutLines

        lines: MetricLines | None = None
        if self.config.metrics_file:
            lines = FileLines(self.config.metrics_file)
        elif self.config.lambda_function:
            lines = StdoutLines()
        return AirflowMetrics(EmfWriter(self.config.metrics_namespace, lines))

    @functools.cached_property
    def traces(self) -> RunTraces:
        """The runs' X-Ray segments: to ``UPDRAFT_TRACES_FILE`` when set (local mode), else to the X-Ray daemon
        when Lambda's active tracing runs one, else nowhere."""
        # lazy: cold start (traces built on first use)
        from updraft.metrics.emf import FileLines, MetricLines
        from updraft.traces.run_traces import RunTraces
        from updraft.traces.xray import DaemonLines, SegmentWriter

        lines: MetricLines | None = None
        if self.config.traces_file:
            lines = FileLines(self.config.traces_file)
        elif self.config.xray_daemon_address:
            lines = DaemonLines(self.config.xray_daemon_address)
        return RunTraces(SegmentWriter(lines))

    @functools.cached_property
    def loader(self) -> S3DagLoader:
        """DAG files mirrored from the bucket's DAGs prefix into the work folder (``UPDRAFT_WORK_DIR``, else the
        temporary folder: Lambda's /tmp, kept by a warm container)."""
        # lazy: the scheduler and the API never import the task runtime (test_handler_imports pins it)
        from updraft.runtime.loader import S3DagLoader

        if not self.config.bucket:
            raise ConfigError("the worker needs UPDRAFT_BUCKET (where the DAG files are) in the environment")
        workdir = self.config.mirror_folder(WORKER_MIRROR)
        return S3DagLoader(self.client("s3"), self.config.bucket, self.config.dags_prefix, workdir,
                           plugins_folder=self.config.plugins_folder)

    @functools.cached_property
    def dag_code_credentials(self) -> DagCodeCredentials | None:
        """The DAG-code role's credentials for user code (None without ``UPDRAFT_DAG_CODE_ROLE``: no credentials)."""
        # lazy: the scheduler and the API never import the task runtime (test_handler_imports pins it)
        from updraft.runtime.dag_code_credentials import DagCodeCredentials

        if not self.config.dag_code_role:
            return None
        return DagCodeCredentials(lambda: self.client("sts"), self.config.dag_code_role)

    @functools.cached_property
    def log_sink(self) -> LogSink | None:
        """Task logs in CloudWatch Logs when a task log group is configured (on AWS), else in the bucket under
        ``logs/`` (None without either: the try still runs)."""
        # lazy: the scheduler and the API never import the task runtime (test_handler_imports pins it)
        from updraft.runtime.logs import CloudWatchLogSink, S3LogSink

        if self.config.task_log_group:
            return CloudWatchLogSink(self.client("logs"), self.config.task_log_group)
        if not self.config.bucket:
            return None
        return S3LogSink(self.client("s3"), self.config.bucket, LOGS_PREFIX)


_shared: Services | None = None


def reset_shared_services() -> None:
    """Forget the process's Services: local mode changes the environment it was built from when it starts."""
    global _shared
    _shared = None


def shared_services() -> Services:
    """The process's Services, built on first use: built at import it would read the environment before tests
    or local mode set it, and a warm Lambda container keeps it (and its clients) between invocations."""
    global _shared
    if _shared is None:
        _shared = Services()
    return _shared
