"""How every botocore client of Updraft is configured: its retries, and a fixed user agent.

**Retries.** botocore's standard mode, with more attempts than its default. Throttling (DynamoDB's
ProvisionedThroughputExceeded/ThrottlingException, S3's SlowDown, Lambda's TooManyRequests, ECS's and Step
Functions' ThrottlingException) and transient errors (5xx, connection resets) are retried with exponential backoff
and jitter. Eight schedulers, a burst of workers and a parse storm share one table and one account's API limits, so
a call gets 8 attempts (about 40 s of backoff at most) before its failure reaches the handler, where Lambda's own
retry and the on-failure destination take over. A retried write is never half-applied: each is one request, and a
retried conditional write recognises its own landed effect (``store.writes.acknowledged``).

**User agent.** botocore otherwise composes the ``User-Agent`` header from about fifteen sanitized parts twice per
request (``UserAgentString.to_string``): ~0.3 ms of a DynamoDB request's ~2 ms of client CPU, measured against the
embedded AWS, on requests that are most of a task's work in local mode and billed Lambda time on AWS. botocore's
``Config(user_agent=...)`` replaces the composed string with a fixed one (Updraft's, botocore's and Python's
versions); AWS reads the header only for its own statistics.
"""

from __future__ import annotations

import platform

from botocore import __version__ as botocore_version
from botocore.config import Config

from updraft import __version__

MAX_ATTEMPTS = 8  # the first attempt included
USER_AGENT = f"updraft/{__version__} botocore/{botocore_version} python/{platform.python_version()}"


def client_config() -> Config:
    """The botocore ``Config`` every boto3 client of Updraft is built with (the store's DynamoDB client gets the
    same user agent: ``store.models``)."""
    return user_agent_config().merge(Config(retries={"mode": "standard", "total_max_attempts": MAX_ATTEMPTS}))


def user_agent_config() -> Config:
    """The part of ``client_config`` a client whose other settings its library chooses (pynamodb's) takes."""
    return Config(user_agent=USER_AGENT)
