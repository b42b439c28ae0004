"""The parser Lambda honours the environment's dags_are_paused_at_creation (UPDRAFT_DAGS_PAUSED_AT_CREATION)."""

from __future__ import annotations

import json

from tests.functional.lambda_helpers import lambda_context
from tests.functional.test_parser_handler import (
    BUCKET,
    DAG_FILE,
    EVENTS,
    KEY,
    _reader,
    handler_module,  # noqa: F401  (the fixture, shared)
)


def test_a_new_dag_starts_unpaused_when_the_environment_says_so(handler_module, monkeypatch):  # noqa: F811
    handler, s3 = handler_module
    monkeypatch.setenv("UPDRAFT_DAGS_PAUSED_AT_CREATION", "false")
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE)
    handler.handler(json.loads((EVENTS / "s3_object_created.json").read_text()), lambda_context("parser"))
    assert _reader().get_dag_meta("from_s3").is_paused is False
