"""The DynamoDB requests a block of code sends, seen where botocore sends each one (one per request: a batch is
one, a retry by the SDK is not another): what the request-count tests assert on."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, NamedTuple
from unittest import mock

from botocore.client import BaseClient


class Request(NamedTuple):
    operation: str
    pk: str  # "" for a Query or a batch
    sk: str
    update: str = ""  # an UpdateItem's expression (a mark SETs, an unmark REMOVEs)


def _request(operation: str, params: dict[str, Any]) -> Request:
    item = params.get("Key") or params.get("Item") or {}
    return Request(operation, item.get("pk", {}).get("S", ""), item.get("sk", {}).get("S", ""),
                   params.get("UpdateExpression", ""))


@contextlib.contextmanager
def dynamo_requests() -> Iterator[list[Request]]:
    """Every DynamoDB request sent while the block runs, in order (blocks may nest: each sees its own)."""
    sent: list[Request] = []
    original = BaseClient._make_api_call

    def call(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        if client.meta.service_model.service_name == "dynamodb":
            sent.append(_request(operation, params))
        return original(client, operation, params)

    with mock.patch.object(BaseClient, "_make_api_call", call):
        yield sent


def operations(sent: list[Request]) -> list[str]:
    return [request.operation for request in sent]
