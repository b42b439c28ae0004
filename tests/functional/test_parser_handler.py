"""The parser Lambda handler, invoked with the sample S3 events against moto's S3."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import boto3
import pytest
from moto import mock_aws

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events" / "parser"
BUCKET = "updraft-dev-data"
KEY = "dags/example etl(v2).py"

DAG_FILE = b'''
from datetime import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator
from helpers import TASK_IDS

with DAG("from_s3", schedule=None, start_date=datetime(2024, 1, 1)):
    EmptyOperator(task_id=TASK_IDS[0])
'''


def _context() -> SimpleNamespace:
    return SimpleNamespace(function_name="parser", memory_limit_in_mb=512, aws_request_id="req-1",
                           invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:parser")


@pytest.fixture
def handler_module(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        s3.put_object(Bucket=BUCKET, Key="dags/helpers.py", Body=b"TASK_IDS = ['first']\n")
        from functions.parser import handler

        monkeypatch.setattr(handler, "_s3_client", s3)
        monkeypatch.setattr("updraft.parsing.s3.default_workdir", lambda: str(tmp_path / "dags"))
        yield handler, s3


def test_created_event_parses_the_named_file_with_its_siblings(handler_module):
    handler, s3 = handler_module
    version = s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE)["VersionId"]
    event = json.loads((EVENTS / "s3_object_created.json").read_text())

    result = handler.handler(event, _context())

    entry = result["parsed"][KEY]
    assert entry["dag_ids"] == ["from_s3"]
    assert entry["import_errors"] == []
    assert entry["relative_path"] == "example etl(v2).py"
    assert entry["file_version"] == version
    # At-least-once delivery: the same event again gives the same answer.
    assert handler.handler(event, _context()) == result


def test_broken_file_becomes_an_import_error_not_a_failure(handler_module):
    handler, s3 = handler_module
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"from airflow.sdk import DAG\nraise RuntimeError('boom')\n")
    result = handler.handler(json.loads((EVENTS / "s3_object_created.json").read_text()), _context())
    (error,) = result["parsed"][KEY]["import_errors"]
    assert "RuntimeError: boom" in error["stacktrace"]
    assert error["lineno"] == 2


def test_removed_event_reports_the_key(handler_module):
    handler, _ = handler_module
    result = handler.handler(json.loads((EVENTS / "s3_object_removed.json").read_text()), _context())
    assert result == {"parsed": {}, "removed": [KEY]}


def test_events_outside_the_dags_prefix_are_ignored(handler_module):
    handler, _ = handler_module
    event = json.loads((EVENTS / "s3_object_created.json").read_text())
    event["Records"][0]["s3"]["object"]["key"] = "logs/run.log"
    assert handler.handler(event, _context()) == {"parsed": {}, "removed": []}


def test_malformed_event_is_a_clear_error(handler_module):
    handler, _ = handler_module
    with pytest.raises(ValueError, match="no 'Records' list"):
        handler.handler({"detail-type": "Scheduled Event"}, _context())
