"""``mocked_client(service)``: one boto3 client per service (us-east-1) for the whole test process, for use inside
``mock_aws()`` only.

Making a client costs 20-30 ms (botocore copies its event hooks and builds the client class each time), and
fixtures and helpers that made their own for every test spent ~7 % of the fast tier's CPU on it. A client holds
no AWS state: moto's handler, registered for every client of the process, answers from whichever mock is active,
so one client serves every test. A test that registers hooks on a client or needs its own credentials makes its
own.
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _session() -> Any:
    import boto3

    return boto3.session.Session(region_name="us-east-1")


@functools.cache
def mocked_client(service: str) -> Any:
    return _session().client(service)
