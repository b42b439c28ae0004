"""The parser, scheduler and worker Lambdas, their triggers, and least-privilege policies."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudwatch as cloudwatch
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
from infra.constructs.bundling import RUNTIME, lambda_code
from infra.constructs.data import UpdraftData
from updraft.config import UpdraftConfig

DAGS_PREFIX = "dags/"
STORE_PREFIX = "store/"  # updraft.store.config.StoreConfig.s3_prefix: large items
LOGS_PREFIX = "logs/"  # updraft.services.LOGS_PREFIX

_RETENTION = {
    1: logs.RetentionDays.ONE_DAY, 3: logs.RetentionDays.THREE_DAYS, 7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS, 30: logs.RetentionDays.ONE_MONTH, 90: logs.RetentionDays.THREE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS, 365: logs.RetentionDays.ONE_YEAR, 731: logs.RetentionDays.TWO_YEARS,
}


class UpdraftFunctions(Construct):
    """Parser (S3 ``dags/*.py`` notifications), scheduler (an EventBridge tick) and worker (async invokes from
    the scheduler, failures to a dead-letter queue). Each role gets its own explicit statements:

    - all three: read/write the table and its indexes, and the bucket's ``store/`` prefix;
    - parser and worker: read and list ``dags/`` (the scheduler never sees DAG code);
    - worker: write ``logs/``; scheduler: invoke the worker.
    """

    def __init__(self, scope: Construct, construct_id: str, *, data: UpdraftData, settings: EnvironmentSettings,
                 bundle_dependencies: bool = True) -> None:
        super().__init__(scope, construct_id)
        self.settings = settings
        removal = RemovalPolicy.RETAIN if settings.retain_data else RemovalPolicy.DESTROY
        self._retention = _RETENTION[settings.log_retention_days]
        self._removal = removal
        self._code = lambda_code(dependencies=bundle_dependencies)
        table, bucket = data.table, data.bucket
        base = UpdraftConfig(table=table.table_name, bucket=bucket.bucket_name, dags_prefix=DAGS_PREFIX,
                             tick_seconds=settings.tick_minutes * 60, parallelism=settings.parallelism)

        self.dead_letter_queue = sqs.Queue(
            self, "WorkerDLQ", retention_period=Duration.days(14), enforce_ssl=True,
            encryption=sqs.QueueEncryption.SQS_MANAGED)
        # Any message here is a task instance whose dispatch was lost: alarm on the first one.
        self.dead_letter_alarm = cloudwatch.Alarm(
            self, "WorkerDLQNotEmpty",
            metric=self.dead_letter_queue.metric_approximate_number_of_messages_visible(period=Duration.minutes(5)),
            threshold=1, evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description="Updraft worker invocations failed after their retries (see the DLQ's messages)")
        self.worker = self._function("worker", settings.worker, base.to_env(),
                                     retry_attempts=settings.worker_retry_attempts,
                                     max_event_age=Duration.seconds(settings.worker_max_event_age_seconds),
                                     on_failure=destinations.SqsDestination(self.dead_letter_queue))
        scheduler_env = UpdraftConfig(**{**base.__dict__, "worker_function": self.worker.function_name}).to_env()
        self.scheduler = self._function("scheduler", settings.scheduler, scheduler_env, retry_attempts=0)
        self.parser = self._function("parser", settings.parser, base.to_env())

        # Triggers.
        bucket.add_event_notification(s3.EventType.OBJECT_CREATED, s3n.LambdaDestination(self.parser),
                                      s3.NotificationKeyFilter(prefix=DAGS_PREFIX, suffix=".py"))
        bucket.add_event_notification(s3.EventType.OBJECT_REMOVED, s3n.LambdaDestination(self.parser),
                                      s3.NotificationKeyFilter(prefix=DAGS_PREFIX, suffix=".py"))
        self.tick = events.Rule(self, "Tick", schedule=events.Schedule.rate(Duration.minutes(settings.tick_minutes)),
                                targets=[targets.LambdaFunction(self.scheduler, retry_attempts=0)])

        # Least privilege.
        for fn in (self.parser, self.scheduler, self.worker):
            fn.add_to_role_policy(iam.PolicyStatement(
                sid="TableReadWrite",
                actions=["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem",
                         "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem",
                         "dynamodb:ConditionCheckItem"],
                resources=[table.table_arn, f"{table.table_arn}/index/*"]))
            fn.add_to_role_policy(iam.PolicyStatement(
                sid="StoreObjects", actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
                resources=[bucket.arn_for_objects(f"{STORE_PREFIX}*")]))
        for fn in (self.parser, self.worker):
            fn.add_to_role_policy(iam.PolicyStatement(
                sid="ReadDagFiles", actions=["s3:GetObject"], resources=[bucket.arn_for_objects(f"{DAGS_PREFIX}*")]))
            fn.add_to_role_policy(iam.PolicyStatement(
                sid="ListDagFiles", actions=["s3:ListBucket"], resources=[bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{DAGS_PREFIX}*"]}}))
        self.worker.add_to_role_policy(iam.PolicyStatement(
            sid="WriteTaskLogs", actions=["s3:GetObject", "s3:PutObject"],
            resources=[bucket.arn_for_objects(f"{LOGS_PREFIX}*")]))
        self.worker.grant_invoke(self.scheduler)

    def _function(self, name: str, fs: FunctionSettings, environment: dict[str, str], **kwargs: object
                  ) -> lambda_.Function:
        title = name.capitalize()
        log_group = logs.LogGroup(self, f"{title}Logs", retention=self._retention, removal_policy=self._removal)
        return lambda_.Function(
            self, title,
            runtime=RUNTIME, architecture=lambda_.Architecture.X86_64,
            code=self._code, handler=f"functions.{name}.handler.handler",
            memory_size=fs.memory_mib, timeout=Duration.seconds(fs.timeout_seconds),
            reserved_concurrent_executions=fs.reserved_concurrency,
            environment={**environment, "POWERTOOLS_SERVICE_NAME": f"updraft-{name}"},
            log_group=log_group,
            **kwargs,
        )
