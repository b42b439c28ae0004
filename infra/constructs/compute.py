"""The parser, scheduler, worker and API Lambdas, their triggers, alarms, and least-privilege roles."""

from __future__ import annotations

import json
from dataclasses import replace

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_notifications as s3n
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.config import EnvironmentSettings, FunctionSettings
from infra.constructs import access
from infra.constructs.bundling import LAMBDA_DOCKERFILE, PROVIDERS_FILE, RUNTIME, ZIP_LIMIT_BYTES, Bundle
from infra.constructs.dag_code import DagCodeRole
from infra.constructs.data import UpdraftData
from infra.constructs.fargate import APP_ROOT, IMAGE_PLATFORMS, FargateWorkers
from infra.packages import DAG_PACKAGES
from updraft.config import UpdraftConfig
from updraft.executors.fargate import STARTED_BY, TASK_STATE_CHANGE
from updraft.requirements import dag_packages
from updraft.requirements.provider_info import VAR as PROVIDERS_INFO_VAR
from updraft.resources import ASSET_EVENTS_PREFIX, DAGS_PREFIX, ResourceNames

LAMBDA_TASK_ROOT = "/var/task"  # where Lambda puts a zip's files (and the image puts the bundle)
RETENTION = {
    1: logs.RetentionDays.ONE_DAY, 3: logs.RetentionDays.THREE_DAYS, 7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS, 30: logs.RetentionDays.ONE_MONTH, 90: logs.RetentionDays.THREE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS, 365: logs.RetentionDays.ONE_YEAR, 731: logs.RetentionDays.TWO_YEARS,
}


def service_name(function: str) -> str:
    """Powertools' ``service``: the handlers' Logger/Metrics use it, and it is the dimension of their metrics."""
    return f"updraft-{function}"


class UpdraftFunctions(Construct):
    """Parser (S3 ``dags/*.py`` notifications), scheduler (an EventBridge tick), worker (async invokes from the
    scheduler and from other workers, failures to a dead-letter queue) and API (behind API Gateway).

    Each function has its own role, with no managed policy: writing to its own log group plus the statements of
    :mod:`infra.constructs.access`:

    - parser: the table, ``store/``, read ``dags/``;
    - scheduler: the table, ``store/``, invoke the worker, run the Fargate worker task (never ``dags/``);
    - worker: what the parser has, plus writing streams of the task log group, invoking itself and the Fargate
      task (its mini scheduler);
    - api: the table (its routes read DAGs, runs and task instances, and trigger runs, pause DAGs and edit pools),
      reading ``store/`` (large DAG versions and XComs), reading the task log group (the logs route), invoking
      the scheduler (a triggered run starts at once), the secrets key (variables and connections routes).

    The workers (Lambda and Fargate) also use the secrets key and read the configured secrets backend's
    connections and variables prefixes (``EnvironmentSettings.secrets``), nothing more.
    """

    def __init__(self, scope: Construct, construct_id: str, *, data: UpdraftData, fargate: FargateWorkers,
                 names: ResourceNames, settings: EnvironmentSettings, bundle: Bundle, dag_bundle: Bundle,
                 zip_limit_bytes: int = ZIP_LIMIT_BYTES) -> None:
        super().__init__(scope, construct_id)
        self.settings = settings
        self._network = fargate.network  # an existing VPC: the functions that run DAG code go in it
        self._retention = RETENTION[settings.log_retention_days]
        self._removal = RemovalPolicy.RETAIN if settings.retain_data else RemovalPolicy.DESTROY
        self._architecture = (lambda_.Architecture.ARM_64 if settings.architecture == "arm64"
                              else lambda_.Architecture.X86_64)
        if bundle.size > zip_limit_bytes:
            raise ValueError(f"Updraft's own Lambda bundle is {bundle.size} bytes unzipped, over Lambda's limit "
                             f"({zip_limit_bytes}); it holds no requirements: check infra/requirements.lock")
        self._code = bundle.zip_code()
        has_packages = dag_bundle.key != bundle.key
        # DAG code's functions run the DAG-code bundle: as a zip while it fits, else as a container image of the
        # same folder (up to 10 GB): one image asset for the three, each naming its handler.
        self.dag_code_image: ecr_assets.DockerImageAsset | None = None
        self._dag_code = dag_bundle.zip_code() if has_packages else self._code
        if dag_bundle.size > zip_limit_bytes:
            self.dag_code_image = ecr_assets.DockerImageAsset(
                self, "DagCodeImage", directory=str(dag_bundle.context), file=LAMBDA_DOCKERFILE.name,
                exclude=["Dockerfile"], platform=IMAGE_PLATFORMS[settings.architecture])
        table, bucket = data.table, data.bucket
        self.metrics_namespace = f"Updraft/{names.environment}"  # environments sharing an account stay apart
        # Task logs: a stream per try (CloudWatchLogSink), written by the worker Lambda and the Fargate task.
        self.task_logs = logs.LogGroup(self, "TaskLogs", log_group_name=names.task_log_group,
                                       retention=self._retention, removal_policy=self._removal)
        base = UpdraftConfig(table=table.table_name, bucket=bucket.bucket_name, dags_prefix=DAGS_PREFIX,
                             tick_seconds=settings.tick_minutes * 60, parallelism=settings.parallelism,
                             scheduler_memory_mb=settings.scheduler.memory_mib,
                             metrics_namespace=self.metrics_namespace,
                             dags_are_paused_at_creation=settings.dags_are_paused_at_creation,
                             expose_config=settings.expose_config)
        secrets = settings.secrets
        secrets_key = data.secrets_key.key_arn  # only where tries run and in the API: who may use the key
        # What dispatches tries (scheduler, worker's mini scheduler, Fargate task): both executors. The task
        # definition is named by its family so RunTask takes the latest revision a deploy registered. The task
        # log group goes with them: RunTask passes the dispatcher's environment to the Fargate worker.
        deferrals = access.state_machine_arn(self, names.deferral_state_machine)
        dispatching = replace(
            base, worker_function=names.worker_function, scheduler_function=names.scheduler_function,
            deferral_state_machine=deferrals,
            ecs_cluster=fargate.cluster.cluster_name,
            ecs_task_definition=names.ecs_task_family, ecs_container=names.ecs_container,
            ecs_subnets=tuple(fargate.subnet_ids), ecs_security_groups=tuple(fargate.security_group_ids),
            ecs_public_ip=fargate.public_ip, task_log_group=self.task_logs.log_group_name,
            email_from=settings.email_sender,
            secrets_backend=secrets.backend if secrets else None,
            secrets_backend_kwargs=json.dumps(secrets.kwargs) if secrets else None)

        self.dead_letter_queue = sqs.Queue(
            self, "WorkerDLQ", queue_name=names.worker_dlq, retention_period=Duration.days(14), enforce_ssl=True,
            encryption=sqs.QueueEncryption.SQS_MANAGED)
        self.worker = self._function("worker", names.worker_function, settings.worker,
                                     replace(dispatching, kms_key=secrets_key).to_env(), dag_code=True,
                                     retry_attempts=settings.worker_retry_attempts,
                                     max_event_age=Duration.seconds(settings.worker_max_event_age_seconds),
                                     on_failure=destinations.SqsDestination(self.dead_letter_queue))
        # Every async-invoked function keeps what it failed on: the scheduler's ticks and nudges, the parser's S3
        # notifications (after Lambda's own retries) go to the same dead-letter queue as the worker's; each
        # message names the function it failed in (requestContext.functionArn).
        # The scheduler also asks the parser to evaluate a DAG file's custom timetables again, and other scheduler
        # invocations to claim shares of a wide run's ready tries (async invokes).
        self.scheduler = self._function("scheduler", names.scheduler_function, settings.scheduler,
                                        replace(dispatching, parser_function=names.parser_function).to_env(),
                                        retry_attempts=0,
                                        on_failure=destinations.SqsDestination(self.dead_letter_queue))
        self.scheduler.node.add_dependency(self.worker)  # the first tick must find the worker to invoke
        self.parser = self._function("parser", names.parser_function, settings.parser, base.to_env(), dag_code=True,
                                     on_failure=destinations.SqsDestination(self.dead_letter_queue))
        self.api = self._function("api", names.api_function, settings.api,
                                  replace(base, scheduler_function=names.scheduler_function,
                                          deferral_state_machine=deferrals,
                                          task_log_group=self.task_logs.log_group_name,
                                          kms_key=secrets_key,
                                          interface_endpoint_azs=settings.interface_endpoint_azs()).to_env())

        # The deferral state machine's synchronous look at a polling trigger (it writes a fired event on the try).
        self.trigger_check = self._function("trigger_check", names.trigger_check_function, settings.trigger_check,
                                            base.to_env(), dag_code=True)

        # Asset events from outside: uploads under asset-events/, and messages on a queue the settings name.
        self.asset_events = self._function("asset_events", names.asset_events_function, settings.asset_events,
                                           dispatching.to_env(), retry_attempts=2)
        if settings.asset_events_queue_arn:
            queue = sqs.Queue.from_queue_arn(self, "AssetEventsQueue", settings.asset_events_queue_arn)
            self.asset_events.add_event_source_mapping("AssetEventsQueueSource", event_source_arn=queue.queue_arn,
                                                       batch_size=10)
            queue.grant_consume_messages(self.asset_events)
        # Through EventBridge: the bucket's own notifications are the parser's (one per prefix and event type).
        bucket.enable_event_bridge_notification()
        events.Rule(self, "AssetUploads", event_pattern=events.EventPattern(
            source=["aws.s3"], detail_type=["Object Created"],
            detail={"bucket": {"name": [bucket.bucket_name]}, "object": {"key": [{"prefix": ASSET_EVENTS_PREFIX}]}}),
            targets=[targets.LambdaFunction(self.asset_events, retry_attempts=2)])

        # Triggers.
        for event in (s3.EventType.OBJECT_CREATED, s3.EventType.OBJECT_REMOVED):
            bucket.add_event_notification(event, s3n.LambdaDestination(self.parser),
                                          s3.NotificationKeyFilter(prefix=DAGS_PREFIX, suffix=".py"))
        self.tick = events.Rule(self, "Tick", rule_name=names.tick_rule,
                                schedule=events.Schedule.rate(Duration.minutes(settings.tick_minutes)),
                                targets=[targets.LambdaFunction(self.scheduler, retry_attempts=0)])
        # A Fargate worker task that stops without ending its try (out of memory, killed, crashed, never started):
        # ECS's state change reaches the scheduler, which fails the try at once as Airflow fails a task killed
        # externally, instead of after its lease (updraft.scheduling.decisions). Free: no event, no cost, at idle.
        self.task_stopped = events.Rule(self, "FargateTaskStopped", event_pattern=events.EventPattern(
            source=["aws.ecs"], detail_type=[TASK_STATE_CHANGE],
            detail={"clusterArn": [fargate.cluster.cluster_arn], "lastStatus": ["STOPPED"],
                    "startedBy": [STARTED_BY]}),
            targets=[targets.LambdaFunction(self.scheduler, retry_attempts=2)])

        # Least privilege.
        def dispatch() -> list[iam.PolicyStatement]:
            """Both executors: the scheduler's, and the mini scheduler's in every worker (Lambda or Fargate)."""
            return [access.invoke_worker(self, names.worker_function), *fargate.run_task_statements()]

        def email() -> list[iam.PolicyStatement]:
            """Workers send alerts and DAG callbacks' email, from the configured sender only."""
            return [access.send_email(self, settings.email_sender)] if settings.email_sender else []

        def defer() -> list[iam.PolicyStatement]:
            """A try that defers starts its wait; the worker's mini scheduler may end a deferred try (a dagrun
            timeout seen after a task finished) and stop its wait."""
            return [access.start_deferrals(self, names.deferral_state_machine),
                    access.stop_deferrals(self, names.deferral_state_machine)]

        def run_tasks() -> list[iam.PolicyStatement]:
            """What a try's code may read: the secrets key (the metastore) and the backend's prefixes."""
            backend = access.read_secrets_backend(self, secrets.backend, secrets.kwargs) if secrets else []
            return [access.secrets_key(data.secrets_key), *backend]

        grants: dict[lambda_.Function, list[iam.PolicyStatement]] = {
            self.parser: [access.table_read_write(table), access.store_objects(bucket),
                          *access.read_dag_files(bucket)],
            self.scheduler: [access.table_read_write(table), access.store_objects(bucket), *dispatch(),
                             access.invoke_parser(self, names.parser_function),
                             access.invoke_scheduler(self, names.scheduler_function),
                             access.stop_deferrals(self, names.deferral_state_machine),
                             *access.sweep_deferrals(self, names.deferral_state_machine)],
            self.asset_events: [access.table_read_write(table), access.store_objects(bucket), *dispatch(),
                                access.invoke_scheduler(self, names.scheduler_function)],
            self.trigger_check: [access.table_read_write(table)],
            self.worker: [*access.worker_data_access(table, bucket, self.task_logs), *dispatch(), *email(),
                          access.invoke_scheduler(self, names.scheduler_function), *run_tasks(), *defer()],
            self.api: [access.table_read_write(table), access.read_store_objects(bucket),
                       access.read_dag_source(bucket), access.read_task_logs(self.task_logs),
                       access.invoke_scheduler(self, names.scheduler_function), access.secrets_key(data.secrets_key),
                       access.stop_deferrals(self, names.deferral_state_machine)],
        }
        for fn, statements in grants.items():
            for statement in statements:
                fn.add_to_role_policy(statement)

        # The Fargate task is a worker too: same environment, same data access, same dispatching.
        # (Lambda sets AWS_REGION itself and refuses it in a function's environment; a container needs it.)
        for name, value in replace(dispatching, region=Stack.of(self).region, kms_key=secrets_key).to_env().items():
            fargate.container.add_environment(name, value)
        for statement in (*access.worker_data_access(table, bucket, self.task_logs), *dispatch(), *email(),
                          access.invoke_scheduler(self, names.scheduler_function), *run_tasks(), *defer()):
            fargate.task_definition.add_to_task_role_policy(statement)

        # User code's own role (DAG files at parse time, tasks, callbacks, a polling trigger's look): assumed by
        # the parser, both workers and the trigger check.
        self.dag_code = DagCodeRole(self, "DagCode", assumers=[self.parser.role, self.worker.role,  # type: ignore[list-item]
                                                              fargate.task_definition.task_role,
                                                              self.trigger_check.role])
        for fn in (self.parser, self.worker, self.trigger_check):
            fn.add_environment("UPDRAFT_DAG_CODE_ROLE", self.dag_code.role.role_arn)
        fargate.container.add_environment("UPDRAFT_DAG_CODE_ROLE", self.dag_code.role.role_arn)

        # The environment's requirements: on the path of DAG code's children only (dag_packages.pythonpath), in
        # the three functions and the Fargate task that run DAG code; the scheduler and the API never run it and
        # get only the providers' metadata (the API's connection types).
        if has_packages:
            for fn in (self.parser, self.worker, self.trigger_check):
                fn.add_environment(dag_packages.VAR, f"{LAMBDA_TASK_ROOT}/{DAG_PACKAGES}")
            fargate.container.add_environment(dag_packages.VAR, f"{APP_ROOT}/{DAG_PACKAGES}")
            for fn in (self.api, self.parser, self.worker, self.trigger_check):
                fn.add_environment(PROVIDERS_INFO_VAR, f"{LAMBDA_TASK_ROOT}/{PROVIDERS_FILE}")
            fargate.container.add_environment(PROVIDERS_INFO_VAR, f"{APP_ROOT}/{PROVIDERS_FILE}")

        self._alarms(names)

    def _alarms(self, names: ResourceNames) -> None:
        # Any message in the DLQ is a task instance whose dispatch was lost: alarm on the first one.
        self.dead_letter_alarm = cloudwatch.Alarm(
            self, "WorkerDLQNotEmpty",
            metric=self.dead_letter_queue.metric_approximate_number_of_messages_visible(period=Duration.minutes(5)),
            threshold=1, evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description="Updraft invocations (worker, scheduler or parser) failed after their retries "
                              "(see the DLQ's messages)")
        # The parser's ImportErrors metric (files of one event that failed to import); no data is no error.
        self.import_errors_alarm = cloudwatch.Alarm(
            self, "DagImportErrors",
            metric=cloudwatch.Metric(namespace=self.metrics_namespace, metric_name="ImportErrors",
                                     dimensions_map={"service": service_name("parser")},
                                     statistic=cloudwatch.Stats.SUM, period=Duration.minutes(5)),
            threshold=1, evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=f"A DAG file uploaded to {names.environment} failed to import "
                              "(updraft dags list-import-errors shows which)")
        self._fault_alarms(names)

    def _fault_alarms(self, names: ResourceNames) -> None:
        """Issue 18: a failing scheduler or parser, and the poison pills the scheduler sets aside, are seen."""
        def on_first(alarm_id: str, metric: cloudwatch.IMetric, description: str) -> cloudwatch.Alarm:
            return cloudwatch.Alarm(
                self, alarm_id, metric=metric, threshold=1, evaluation_periods=1,
                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING, alarm_description=description)

        five_minutes = Duration.minutes(5)
        self.scheduler_errors_alarm = on_first(
            "SchedulerErrors", self.scheduler.metric_errors(period=five_minutes, statistic=cloudwatch.Stats.SUM),
            f"The {names.environment} scheduler failed an invocation (its log group says why; the event is in "
            "the dead-letter queue)")
        self.parser_errors_alarm = on_first(
            "ParserErrors", self.parser.metric_errors(period=five_minutes, statistic=cloudwatch.Stats.SUM),
            f"The {names.environment} parser failed an invocation (not an import error: the parser itself)")
        self.poison_pills_alarm = on_first(
            "PoisonPills",
            cloudwatch.Metric(namespace=self.metrics_namespace, metric_name="PoisonPills",
                              dimensions_map={"service": service_name("scheduler")},
                              statistic=cloudwatch.Stats.SUM, period=five_minutes),
            f"The {names.environment} scheduler set aside a run or DAG it cannot load or decide (the run's note "
            "and `updraft tasks why` say why)")

    def _function(self, name: str, function_name: str, fs: FunctionSettings, environment: dict[str, str], *,
                  dag_code: bool = False, **kwargs: object) -> lambda_.Function:
        title = name.capitalize()
        log_group = logs.LogGroup(self, f"{title}Logs", retention=self._retention, removal_policy=self._removal)
        # Its own role without AWSLambdaBasicExecutionRole (logs:* on every log group): only its log group.
        role = iam.Role(self, f"{title}Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                        description=f"Updraft {name} function")
        log_group.grant_write(role)
        handler = f"functions.{name}.handler.handler"
        code, runtime = (self._dag_code if dag_code else self._code), RUNTIME
        if dag_code and self.dag_code_image is not None:
            code = lambda_.Code.from_ecr_image(self.dag_code_image.repository,
                                               tag_or_digest=self.dag_code_image.image_tag, cmd=[handler])
            runtime, handler = lambda_.Runtime.FROM_IMAGE, lambda_.Handler.FROM_IMAGE
        if dag_code and self._network is not None:
            # In the existing VPC's private subnets. Lambda manages the function's ENIs with the role's rights:
            # AWSLambdaVPCAccessExecutionRole's EC2 statement, not its logs one (the role writes its own group only).
            network = self._network
            kwargs = {**kwargs, "vpc": network.vpc, "vpc_subnets": ec2.SubnetSelection(subnets=network.subnets),
                      "security_groups": network.security_groups}
            role.add_to_policy(access.manage_vpc_interfaces())
        return lambda_.Function(
            self, title, function_name=function_name, role=role,
            runtime=runtime, architecture=self._architecture,
            code=code, handler=handler,
            memory_size=fs.memory_mib, timeout=Duration.seconds(fs.timeout_seconds),
            reserved_concurrent_executions=fs.reserved_concurrency,
            environment={**environment, "POWERTOOLS_SERVICE_NAME": service_name(name)},
            log_group=log_group,
            # X-Ray: the function's own segments, and the daemon the scheduler and worker send each run's trace
            # to (``updraft.traces``; the role gets xray:PutTraceSegments).
            tracing=lambda_.Tracing.ACTIVE,
            **kwargs,
        )
