"""The credentials user code gets: short-lived STS credentials of the environment's DAG-code role, or none at all.

The CDK app creates a DAG-code role (``infra/constructs/access.py``: no access to Updraft's table, queues or
bucket beyond reading ``dags/``) that users extend with their own policies, as MWAA's execution role. The worker
and the parser assume it (``UPDRAFT_DAG_CODE_ROLE``) and hand only its credentials to the process running user
code. One AssumeRole per process until the credentials come near expiry (``REFRESH_BEFORE``), so a warm worker
pays it once an hour, not once a try. Without a role configured user code gets no AWS credentials at all: a boto3
call in a task fails with "Unable to locate credentials".
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any

SESSION_SECONDS = 3600
REFRESH_BEFORE = dt.timedelta(minutes=10)  # longer than a try's lease: credentials never expire mid-call


class DagCodeCredentials:
    """The DAG-code role's credentials as environment variables, cached until ``REFRESH_BEFORE`` their expiry.

    ``endpoint_url``: the AWS those credentials are for, when user code cannot find it in its own environment
    (``updraft dags test`` serves its in-process embedded AWS to DAG code at an address only it knows); given to user
    code as ``AWS_ENDPOINT_URL`` with them. None on AWS (and in local mode, whose processes all have it already).
    """

    def __init__(self, sts_client: Callable[[], Any], role_arn: str, *, session_name: str = "updraft-dag-code",
                 duration_s: int = SESSION_SECONDS, now_fn: Callable[[], dt.datetime] | None = None,
                 endpoint_url: str | None = None) -> None:
        self.sts_client = sts_client
        self.role_arn = role_arn
        self.endpoint_url = endpoint_url
        self.session_name = session_name
        self.duration_s = duration_s
        self.now_fn = now_fn or (lambda: dt.datetime.now(dt.UTC))
        self._lock = threading.Lock()
        self._cached: tuple[dt.datetime, dict[str, str]] | None = None
        self.assumed = 0  # how many AssumeRole calls this process made (tests and the bench read it)

    def environment(self) -> dict[str, str]:
        """``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN`` of the role, fresh enough (and
        ``AWS_ENDPOINT_URL`` with an ``endpoint_url``)."""
        with self._lock:
            if self._cached is None or self._cached[0] - REFRESH_BEFORE <= self.now_fn():
                self._cached = self._assume()
            endpoint = {"AWS_ENDPOINT_URL": self.endpoint_url} if self.endpoint_url else {}
            return {**self._cached[1], **endpoint}

    def _assume(self) -> tuple[dt.datetime, dict[str, str]]:
        response = self.sts_client().assume_role(
            RoleArn=self.role_arn, RoleSessionName=self.session_name, DurationSeconds=self.duration_s,
            Tags=[{"Key": "updraft:purpose", "Value": "dag-code"}])
        self.assumed += 1
        creds = response["Credentials"]
        expires = creds["Expiration"]
        if isinstance(expires, str):
            expires = dt.datetime.fromisoformat(expires)
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=dt.UTC)
        return expires, {"AWS_ACCESS_KEY_ID": creds["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": creds["SecretAccessKey"],
                         "AWS_SESSION_TOKEN": creds["SessionToken"]}
