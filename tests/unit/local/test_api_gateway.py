"""Local mode's API Gateway builds the REST proxy event the deployed API Gateway sends."""

from __future__ import annotations

import json
from pathlib import Path

from updraft.local.api_gateway import proxy_event

SAMPLE = json.loads((Path(__file__).resolve().parents[3] / "events" / "api" / "health.json").read_text())


def test_the_event_has_the_sample_events_shape_and_the_request():
    event = proxy_event("POST", "/api/v2/dags/x/dagRuns?limit=5&tag=a&tag=b", {"Accept": "application/json"},
                        b'{"conf": {}}')
    assert set(SAMPLE) <= set(event)
    assert set(SAMPLE["requestContext"]) & set(event["requestContext"]) >= {"httpMethod", "path", "stage",
                                                                            "identity", "requestId"}
    assert (event["httpMethod"], event["path"], event["resource"]) == ("POST", "/api/v2/dags/x/dagRuns",
                                                                       "/{proxy+}")
    assert event["pathParameters"] == {"proxy": "api/v2/dags/x/dagRuns"}
    assert event["queryStringParameters"] == {"limit": "5", "tag": "b"}
    assert event["multiValueQueryStringParameters"] == {"limit": ["5"], "tag": ["a", "b"]}
    assert json.loads(event["body"]) == {"conf": {}} and event["isBase64Encoded"] is False


def test_a_request_without_query_or_body_has_nulls_as_api_gateway_sends():
    event = proxy_event("GET", "/api/v2/monitor/health", {}, b"")
    assert event["queryStringParameters"] is None and event["multiValueQueryStringParameters"] is None
    assert event["body"] is None
