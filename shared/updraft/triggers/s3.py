"""``airflow.providers.amazon.aws.triggers.s3.S3KeyTrigger``, and the S3 look it and ``S3KeySensor`` share.

A polling trigger: the deferral state machine's check function looks once per interval
(``updraft.runtime.trigger_check``) by calling ``poll_aws(session)`` with a boto3 session of the environment's
DAG-code role, never with its own credentials, so a DAG waits only on buckets its own code could read. The look
is the provider's: a key (``bucket_key``, a relative key with ``bucket_name`` or a full ``s3://`` url, or a list
of them, all of which must exist), a Unix wildcard (``wildcard_match``, from the listing of its prefix) or a regex
(``use_regex``, from the listing of the bucket). The events are the provider's: ``{"status": "success"}``,
``{"status": "running", "files": [...]}`` when the deferring operator checks the files itself
(``should_check_fn``), or ``{"status": "error", "message": ...}`` when the look fails.

Connections are not how Updraft hands AWS credentials to DAG code: ``aws_conn_id`` other than ``aws_default`` (or
None) is refused naming it, as is any hook parameter the provider would pass to its ``S3Hook``.
"""

from __future__ import annotations

import asyncio
import fnmatch
import re
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from updraft.sdk.aws_connections import check_conn_id
from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.triggers.base import BaseTrigger, TriggerEvent

CLASSPATH = "airflow.providers.amazon.aws.triggers.s3.S3KeyTrigger"
DEFAULT_METADATA_KEYS = ["Size", "Key"]


def bucket_and_key(bucket: str | None, key: str) -> tuple[str, str]:
    """The provider's ``S3Hook.get_s3_bucket_key``: a relative ``key`` in ``bucket``, or a full url without one."""
    if bucket is None:
        return parse_s3_url(key)
    parsed = urlsplit(key)
    if parsed.scheme or parsed.netloc:
        raise TypeError("If `bucket_name` is provided, bucket_key should be a relative path from root level, "
                        "rather than a full s3:// url")
    return bucket, key


def parse_s3_url(url: str) -> tuple[str, str]:
    """``s3://bucket/key`` (also ``s3a``/``s3n``) or an https path-style or virtual-hosted url, as the provider."""
    scheme = url.split("//", maxsplit=1)[0]
    if re.match(r"s3[na]?:", scheme, re.IGNORECASE):
        parsed = urlsplit(url, allow_fragments=False)
        if parsed.netloc:
            return parsed.netloc, parsed.path.lstrip("/")
    elif scheme == "https:":
        rest = url.split("//", 1)[1]
        host = rest.split(".")
        if host[0] == "s3" and rest.count("/") >= 2:
            _, bucket, key = rest.split("/", 2)
            return bucket, key
        if len(host) > 1 and host[1] == "s3":
            return host[0], rest.partition("/")[2]
    raise ValueError(f'Please provide a bucket name using a valid format of the form: S3://bucket-name/key-name '
                     f'but provided: "{url}"')


def _listing(s3: Any, bucket: str, prefix: str) -> Iterator[dict[str, Any]]:
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        yield from page.get("Contents", ())


def _head(s3: Any, bucket: str, key: str) -> dict[str, Any] | None:
    try:
        return dict(s3.head_object(Bucket=bucket, Key=key))
    except Exception as exc:
        if str(getattr(exc, "response", {}).get("Error", {}).get("Code", "")) in ("404", "NoSuchKey", "NotFound"):
            return None
        raise


def _metadata(obj: dict[str, Any], key: str, metadata_keys: list[str]) -> dict[str, Any]:
    """What ``check_fn`` sees of one object: the requested head_object attributes (``Size``: its length)."""
    if "*" in metadata_keys:
        return {**obj, "Key": key}
    found = {name: obj.get("ContentLength") if name == "Size" else obj.get(name) for name in metadata_keys}
    return {**found, "Key": key} if "Key" in metadata_keys else found


def matching_files(s3: Any, bucket_name: str | None, bucket_key: str, *, wildcard_match: bool, use_regex: bool,
                   metadata_keys: list[str]) -> list[dict[str, Any]]:
    """The objects ``bucket_key`` names (one for a plain key, every match of a wildcard or regex), each with its
    ``metadata_keys`` attributes; empty when there is none yet."""
    bucket, key = bucket_and_key(bucket_name, bucket_key)
    if wildcard_match or use_regex:
        prefix = re.split(r"[\[*?]", key, maxsplit=1)[0] if wildcard_match else ""
        matched = [k for k in _listing(s3, bucket, prefix)
                   if (fnmatch.fnmatch(k["Key"], key) if wildcard_match else re.match(key, k["Key"]))]
        found: list[tuple[str, dict[str, Any] | None]]
        if set(metadata_keys) <= {"Size", "Key"}:  # the listing has them: no head_object per match
            found = [(k["Key"], {"ContentLength": k.get("Size")}) for k in matched]
        else:
            found = [(k["Key"], _head(s3, bucket, k["Key"])) for k in matched]
        return [_metadata(obj, name, metadata_keys) for name, obj in found if obj is not None]
    obj = _head(s3, bucket, key)
    return [] if obj is None else [_metadata(obj, key, metadata_keys)]


def keys_present(s3: Any, bucket_name: str | None, bucket_key: str | list[str], *, wildcard_match: bool,
                 use_regex: bool) -> bool:
    """Whether every key (or pattern) of ``bucket_key`` matches an object."""
    keys = [bucket_key] if isinstance(bucket_key, str) else list(bucket_key)
    return all(matching_files(s3, bucket_name, key, wildcard_match=wildcard_match, use_regex=use_regex,
                              metadata_keys=["Key"]) for key in keys)


def s3_client(session: Any, *, region_name: str | None, verify: bool | str | None,
              botocore_config: dict[str, Any] | None) -> Any:
    """An S3 client of ``session`` with the provider's client arguments."""
    from botocore.config import Config

    return session.client("s3", region_name=region_name, verify=verify,
                          config=Config(**botocore_config) if botocore_config else None)


class S3KeyTrigger(BaseTrigger):
    """Fires once every key of ``bucket_key`` exists (the provider's arguments and events)."""

    def __init__(self, bucket_name: str | None, bucket_key: str | list[str], wildcard_match: bool = False,
                 aws_conn_id: str | None = "aws_default", poke_interval: float = 5.0, should_check_fn: bool = False,
                 use_regex: bool = False, region_name: str | None = None, verify: bool | str | None = None,
                 botocore_config: dict[str, Any] | None = None, metadata_keys: list[str] | None = None,
                 **hook_params: Any) -> None:
        super().__init__()
        check_conn_id("S3KeyTrigger", aws_conn_id)
        # serialize() nests the hook parameters under "hook_params", as the provider's does
        hook_params = {**(hook_params.pop("hook_params", None) or {}), **hook_params}
        if hook_params:
            raise UnsupportedFeatureError(f"S3KeyTrigger hook parameters {sorted(hook_params)}",
                                          "Updraft's S3 look takes region_name, verify and botocore_config only")
        self.bucket_name = bucket_name
        self.bucket_key = bucket_key
        self.wildcard_match = wildcard_match
        self.aws_conn_id = aws_conn_id
        self.hook_params: dict[str, Any] = {}
        self.poke_interval = poke_interval
        self.should_check_fn = should_check_fn
        self.use_regex = use_regex
        self.region_name = region_name
        self.verify = verify
        self.botocore_config = botocore_config
        self.metadata_keys = metadata_keys if metadata_keys else list(DEFAULT_METADATA_KEYS)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return CLASSPATH, {
            "bucket_name": self.bucket_name, "bucket_key": self.bucket_key, "wildcard_match": self.wildcard_match,
            "aws_conn_id": self.aws_conn_id, "hook_params": self.hook_params, "poke_interval": self.poke_interval,
            "should_check_fn": self.should_check_fn, "use_regex": self.use_regex, "region_name": self.region_name,
            "verify": self.verify, "botocore_config": self.botocore_config, "metadata_keys": self.metadata_keys,
        }

    def poll_aws(self, session: Callable[[], Any]) -> TriggerEvent | None:
        """One look with the boto3 session ``session()`` makes (the DAG-code role's): the event, or None while a
        key is missing."""
        try:
            s3 = s3_client(session(), region_name=self.region_name, verify=self.verify,
                           botocore_config=self.botocore_config)
            if not keys_present(s3, self.bucket_name, self.bucket_key, wildcard_match=self.wildcard_match,
                                use_regex=self.use_regex):
                return None
            if not self.should_check_fn:
                return TriggerEvent({"status": "success"})
            keys = [self.bucket_key] if isinstance(self.bucket_key, str) else self.bucket_key
            files = [f for key in keys for f in matching_files(
                s3, self.bucket_name, key, wildcard_match=self.wildcard_match, use_regex=self.use_regex,
                metadata_keys=self.metadata_keys)]
            return TriggerEvent({"status": "running", "files": files})
        except Exception as exc:  # the provider's trigger turns any failure into an error event
            return TriggerEvent({"status": "error", "message": str(exc)})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """The provider's loop, for running the trigger outside Updraft (with boto3's default session)."""
        import boto3

        while True:
            event = self.poll_aws(boto3.Session)
            if event is not None:
                yield event
                return
            await asyncio.sleep(self.poke_interval)
