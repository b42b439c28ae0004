"""How every AWS call Updraft makes is retried: botocore's standard mode, with more attempts than its default.

Throttling (DynamoDB's ProvisionedThroughputExceeded/ThrottlingException, S3's SlowDown, Lambda's
TooManyRequests, ECS's and Step Functions' ThrottlingException) and transient errors (5xx, connection resets) are
retried with exponential backoff and jitter. Eight schedulers, a burst of workers and a parse storm share one
table and one account's API limits, so a call gets 8 attempts (about 40 s of backoff at most) before its failure
reaches the handler, where Lambda's own retry and the on-failure destination take over. A retried write is never
half-applied: each is one request, and a retried conditional write recognises its own landed effect
(``store.writes.acknowledged``).
"""

from __future__ import annotations

from botocore.config import Config

MAX_ATTEMPTS = 8  # the first attempt included


def client_config() -> Config:
    """The botocore ``Config`` every boto3 client of Updraft is built with."""
    return Config(retries={"mode": "standard", "max_attempts": MAX_ATTEMPTS})
