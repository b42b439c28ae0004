"""Test-wide setup: fake AWS credentials (nothing may reach real AWS) and serialized moto for concurrency tests."""

from __future__ import annotations

import os

import pytest

# Before any boto3 client exists: tests must never find real credentials or a real region.
for _name, _value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                      "AWS_SECURITY_TOKEN": "testing", "AWS_SESSION_TOKEN": "testing",
                      "AWS_DEFAULT_REGION": "us-east-1"}.items():
    os.environ[_name] = _value


@pytest.fixture(scope="session")
def serialized_moto():
    """One request at a time into in-process moto, as local mode runs it (see updraft.local.embedded_aws)."""
    from updraft.local.embedded_aws import serialized_moto as serialize

    with serialize():
        yield
