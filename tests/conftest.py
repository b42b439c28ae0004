"""Test-wide setup: fake AWS credentials (nothing may reach real AWS) and serialized moto for concurrency tests."""

from __future__ import annotations

import os
import threading

import pytest

# Before any boto3 client exists: tests must never find real credentials or a real region.
for _name, _value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                      "AWS_SECURITY_TOKEN": "testing", "AWS_SESSION_TOKEN": "testing",
                      "AWS_DEFAULT_REGION": "us-east-1"}.items():
    os.environ[_name] = _value


_moto_lock = threading.RLock()


@pytest.fixture(scope="session")
def serialized_moto():
    """Let one request into in-process moto at a time.

    moto's single-item check-then-write is not atomic across threads (the GIL can switch between them), so a
    concurrency test without this would report races real DynamoDB does not have (notes: aws-offline.md 2a).
    """
    from moto.core import botocore_stubber

    original = botocore_stubber.BotocoreStubber.__call__

    def locked(self, *args, **kwargs):
        with _moto_lock:
            return original(self, *args, **kwargs)

    botocore_stubber.BotocoreStubber.__call__ = locked
    try:
        yield
    finally:
        botocore_stubber.BotocoreStubber.__call__ = original
