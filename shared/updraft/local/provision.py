"""Create, on the embedded AWS, the resources the CDK stack defines, under the names it gives them.

Idempotent: local mode calls it on every start, over a fresh server or one restored from ``--state-dir``.
The DAG-code role is created too, so user code in local mode holds that role's (embedded STS) credentials as on
AWS, never local mode's own. Lambda functions, the tick rule and the ECS cluster are not created: moto cannot
run Lambda code, fire schedule rules or run Fargate tasks without Docker, so local mode plays those parts itself
(``updraft.local.system``).
S3 -> Lambda notifications are dropped by moto too; the bucket notifies a queue instead, which local mode
drains into the parser handler, so the parser sees exactly the S3 events it gets on AWS.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from updraft.config import UpdraftConfig
from updraft.resources import ASSET_EVENTS_PREFIX, DAGS_PREFIX, ResourceNames
from updraft.store.config import StoreConfig
from updraft.store.tables import create_table


@dataclass(frozen=True)
class LocalResources:
    names: ResourceNames
    endpoint_url: str
    dag_events_queue_url: str
    dag_code_role_arn: str

    def config(self, **overrides: Any) -> UpdraftConfig:
        """The configuration every local handler and process runs with."""
        values: dict[str, Any] = {
            "table": self.names.table, "region": self.names.region, "bucket": self.names.bucket,
            "dags_prefix": DAGS_PREFIX, "dynamodb_endpoint": self.endpoint_url, "endpoint_url": self.endpoint_url,
            "worker_function": self.names.worker_function, "ecs_cluster": self.names.ecs_cluster,
            "ecs_task_definition": self.names.ecs_task_family, "ecs_container": self.names.ecs_container,
            "dag_code_role": self.dag_code_role_arn,
        }
        values.update(overrides)
        return UpdraftConfig(**values)


def provision(names: ResourceNames, endpoint_url: str, *, session: Any = None, notify: bool = True) -> LocalResources:
    """Create what is missing; with ``notify=False`` the bucket does not notify yet (call
    :func:`notify_dag_events` once restored objects are in, so restoring does not re-parse every file)."""
    import boto3

    session = session or boto3.session.Session()
    kwargs = {"region_name": names.region, "endpoint_url": endpoint_url}
    create_table(StoreConfig(table_name=names.table, region=names.region, host=endpoint_url),
                 client=session.client("dynamodb", **kwargs))
    s3 = session.client("s3", **kwargs)
    bucket_kwargs: dict[str, Any] = {"Bucket": names.bucket}
    if names.region != "us-east-1":
        bucket_kwargs["CreateBucketConfiguration"] = {"LocationConstraint": names.region}
    with contextlib.suppress(s3.exceptions.BucketAlreadyOwnedByYou):
        s3.create_bucket(**bucket_kwargs)
    s3.put_bucket_versioning(Bucket=names.bucket, VersioningConfiguration={"Status": "Enabled"})
    queue_url = session.client("sqs", **kwargs).create_queue(QueueName=names.dag_events_queue)["QueueUrl"]
    resources = LocalResources(names=names, endpoint_url=endpoint_url, dag_events_queue_url=queue_url,
                               dag_code_role_arn=dag_code_role(session.client("iam", **kwargs), names))
    if notify:
        notify_dag_events(resources, session=session)
    return resources


def dag_code_role(iam: Any, names: ResourceNames) -> str:
    """The DAG-code role's ARN, created if missing; trusted by the account, as the stack's is by its functions."""
    import json

    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["sts:AssumeRole", "sts:TagSession"],
                                                      "Principal": {"AWS": f"arn:aws:iam::{names.account}:root"}}]}
    try:
        role = iam.create_role(RoleName=names.dag_code_role, AssumeRolePolicyDocument=json.dumps(trust))
    except iam.exceptions.EntityAlreadyExistsException:
        role = iam.get_role(RoleName=names.dag_code_role)
    return str(role["Role"]["Arn"])


def notify_dag_events(resources: LocalResources, *, session: Any = None) -> None:
    """``dags/*.py`` created or removed -> the DAG events queue (the stack sends the same to the parser)."""
    import boto3

    session = session or boto3.session.Session()
    kwargs = {"region_name": resources.names.region, "endpoint_url": resources.endpoint_url}
    sqs = session.client("sqs", **kwargs)
    queue_arn = sqs.get_queue_attributes(QueueUrl=resources.dag_events_queue_url,
                                         AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    rules = {"Key": {"FilterRules": [{"Name": "prefix", "Value": DAGS_PREFIX}, {"Name": "suffix", "Value": ".py"}]}}
    # Uploads under the asset-events prefix become asset events (the stack sends them to the asset-events Lambda).
    asset_rules = {"Key": {"FilterRules": [{"Name": "prefix", "Value": ASSET_EVENTS_PREFIX}]}}
    session.client("s3", **kwargs).put_bucket_notification_configuration(
        Bucket=resources.names.bucket, NotificationConfiguration={
            "QueueConfigurations": [{"Id": "dag-files", "QueueArn": queue_arn, "Filter": rules,
                                     "Events": ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"]},
                                    {"Id": "asset-events", "QueueArn": queue_arn, "Filter": asset_rules,
                                     "Events": ["s3:ObjectCreated:*"]}]})
