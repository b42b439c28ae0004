"""``airflow.providers.amazon.aws.sensors.s3.S3KeySensor``: waits for one or more S3 keys, as the provider's.

Poke and reschedule mode look from the worker (``poke``), with the credentials task code has: the environment's
DAG-code role. ``deferrable=True`` looks once and then defers to ``S3KeyTrigger``, which the deferral state
machine's check function polls at ``poke_interval`` with the same role's credentials (``updraft.triggers.s3``).
``check_fn`` (with its ``metadata_keys``) is honoured in poke and reschedule mode; with ``deferrable=True`` it is
refused at parse time, as are an ``aws_conn_id`` other than the default and ``start_from_trigger``: Updraft would
otherwise not do what they ask.
"""

from __future__ import annotations

import datetime
import inspect
from collections.abc import Callable
from typing import Any, ClassVar

from updraft.sdk.aws_connections import check_conn_id
from updraft.sdk.exceptions import AirflowException, TaskDeferred, UnsupportedFeatureError
from updraft.sensors.base import BaseSensorOperator
from updraft.triggers.s3 import S3KeyTrigger, matching_files, s3_client

CHECK_FN_HINT = ("a deferrable S3KeySensor's check_fn would run on a worker after every look; use mode='reschedule' "
                 "(no worker is held between pokes) or deferrable=True without check_fn")
START_HINT = ("Updraft starts a task from its trigger for the time triggers only; use deferrable=True, which looks "
              "once and then waits on the S3KeyTrigger")


class S3KeySensor(BaseSensorOperator):
    """Done when every key of ``bucket_key`` exists (and ``check_fn``, if given, accepts the files)."""

    template_fields: ClassVar[tuple[str, ...]] = ("bucket_key", "bucket_name", "aws_conn_id", "region_name", "verify")

    def __init__(self, *, bucket_key: str | list[str], bucket_name: str | None = None, wildcard_match: bool = False,
                 check_fn: Callable[..., bool] | None = None, verify: str | bool | None = None,
                 deferrable: bool = False, use_regex: bool = False, metadata_keys: list[str] | None = None,
                 aws_conn_id: str | None = "aws_default", region_name: str | None = None,
                 botocore_config: dict[str, Any] | None = None, start_from_trigger: bool = False,
                 **kwargs: Any) -> None:
        if start_from_trigger:
            raise UnsupportedFeatureError("S3KeySensor(start_from_trigger=True)", START_HINT)
        if deferrable and check_fn is not None:
            raise UnsupportedFeatureError("S3KeySensor(deferrable=True, check_fn=...)", CHECK_FN_HINT)
        check_conn_id("S3KeySensor", aws_conn_id)
        super().__init__(**kwargs)
        self.bucket_name = bucket_name
        self.bucket_key = bucket_key
        self.wildcard_match = wildcard_match
        self.check_fn = check_fn
        self.verify = verify
        self.deferrable = deferrable
        self.use_regex = use_regex
        self.metadata_keys = metadata_keys if metadata_keys else ["Size", "Key"]
        self.aws_conn_id = aws_conn_id
        self.region_name = region_name
        self.botocore_config = botocore_config

    def _files(self, s3: Any, key: str) -> list[dict[str, Any]]:
        self.log.info("Poking for key : %s", key if self.bucket_name is None else f"s3://{self.bucket_name}/{key}")
        return matching_files(s3, self.bucket_name, key, wildcard_match=self.wildcard_match,
                              use_regex=self.use_regex, metadata_keys=self.metadata_keys)

    def _check(self, files: list[dict[str, Any]], context: Any) -> bool:
        if not files:
            return False
        if self.check_fn is None:
            return True
        # As the provider: a check_fn taking **kwargs gets the context too.
        parameters = inspect.signature(self.check_fn).parameters.values()
        if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters):
            return bool(self.check_fn(files, **context))
        return bool(self.check_fn(files))

    def poke(self, context: Any) -> bool:
        import boto3

        s3 = s3_client(boto3.Session(), region_name=self.region_name, verify=self.verify,
                       botocore_config=self.botocore_config)
        keys = [self.bucket_key] if isinstance(self.bucket_key, str) else self.bucket_key
        return all(self._check(self._files(s3, key), context) for key in keys)

    def execute(self, context: Any) -> None:
        if not self.deferrable:
            super().execute(context)
        elif not self.poke(context):
            self._defer()

    def _defer(self) -> None:
        # What BaseOperator.defer raises.
        raise TaskDeferred(
            trigger=S3KeyTrigger(bucket_name=self.bucket_name, bucket_key=self.bucket_key,
                                 wildcard_match=self.wildcard_match, aws_conn_id=self.aws_conn_id,
                                 region_name=self.region_name, verify=self.verify,
                                 botocore_config=self.botocore_config, poke_interval=self.poke_interval,
                                 should_check_fn=False, use_regex=self.use_regex, metadata_keys=self.metadata_keys),
            method_name="execute_complete", timeout=datetime.timedelta(seconds=self.timeout))

    def execute_complete(self, context: Any, event: dict[str, Any]) -> None:
        """The trigger fired: done, or the provider's error event as a failure."""
        if event["status"] == "error":
            raise AirflowException(event["message"])
