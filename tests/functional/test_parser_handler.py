"""The parser Lambda handler, invoked with the sample S3 events against moto's S3."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from tests.functional.lambda_helpers import lambda_context
from tests.functional.parse_faults import failing_registration
from updraft.parsing.s3_events import ParseHandlingFailed
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events" / "parser"
BUCKET = "updraft-dev-123456789012-us-east-1"
KEY = "dags/example etl(v2).py"
TABLE = "updraft-parser-test"

DAG_FILE = b'''
from datetime import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator
from helpers import TASK_IDS

with DAG("from_s3", schedule=None, start_date=datetime(2024, 1, 1)):
    EmptyOperator(task_id=TASK_IDS[0])
'''



@pytest.fixture
def handler_module(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("UPDRAFT_TABLE", TABLE)
    monkeypatch.setenv("UPDRAFT_BUCKET", BUCKET)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        s3.put_object(Bucket=BUCKET, Key="dags/helpers.py", Body=b"TASK_IDS = ['first']\n")
        create_table(StoreConfig(table_name=TABLE, region="us-east-1"))
        from functions.parser import handler

        monkeypatch.setattr("updraft.services._shared", None)  # built lazily from the environment above
        monkeypatch.setattr("updraft.parsing.s3.default_workdir", lambda: str(tmp_path / "dags"))
        yield handler, s3


def _metrics(capsys) -> dict:
    """The parser's one EMF document for the invocation(s) since the last read (printed on flush)."""
    (emf,) = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    (directive,) = emf["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "Updraft" and directive["Dimensions"] == [["service"]]
    assert emf["service"] == "updraft-parser"  # the dimension the stack's ImportErrors alarm watches
    return {m["Name"]: emf[m["Name"]] for m in directive["Metrics"]}


def _reader() -> DynamoStore:
    """A second store on the same table: what the scheduler or the API would see."""
    return DynamoStore(StoreConfig(table_name=TABLE, region="us-east-1", s3_bucket=BUCKET),
                       s3_client=boto3.client("s3", region_name="us-east-1"))


@pytest.mark.slow
def test_created_event_parses_the_named_file_with_its_siblings(handler_module, capsys):
    handler, s3 = handler_module
    version = s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE)["VersionId"]
    event = json.loads((EVENTS / "s3_object_created.json").read_text())

    result = handler.handler(event, lambda_context("parser"))
    assert _metrics(capsys) == {"DagFilesParsed": [1.0], "ImportErrors": [0.0]}

    entry = result["parsed"][KEY]
    assert entry["dag_ids"] == ["from_s3"]
    assert entry["import_errors"] == []
    assert entry["relative_path"] == "example etl(v2).py"
    assert entry["file_version"] == version
    assert entry["store"] == {"stored": ["from_s3"], "unchanged": [], "duplicates": [], "deactivated": []}

    store = _reader()
    meta = store.get_dag_meta("from_s3")
    assert meta.relative_fileloc == "example etl(v2).py" and meta.file_version == version
    assert meta.is_paused and meta.is_active
    dag = store.get_serialized_dag("from_s3", meta.dag_hash)
    assert [t.task_id for t in dag.tasks] == ["first"]
    assert store.list_import_errors() == []

    # At-least-once delivery: the same event again parses the same and stores nothing new.
    again = handler.handler(event, lambda_context("parser"))
    assert again["parsed"][KEY]["store"] == {"stored": [], "unchanged": ["from_s3"], "duplicates": [],
                                             "deactivated": []}
    assert {k: v for k, v in again["parsed"][KEY].items() if k != "store"} == {
        k: v for k, v in entry.items() if k != "store"}
    assert store.get_dag_meta("from_s3") == meta


def test_broken_file_becomes_an_import_error_not_a_failure(handler_module, capsys):
    handler, s3 = handler_module
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=b"from airflow.sdk import DAG\nraise RuntimeError('boom')\n")
    result = handler.handler(json.loads((EVENTS / "s3_object_created.json").read_text()), lambda_context("parser"))
    assert _metrics(capsys) == {"DagFilesParsed": [1.0], "ImportErrors": [1.0]}
    (error,) = result["parsed"][KEY]["import_errors"]
    assert "RuntimeError: boom" in error["stacktrace"]
    assert error["lineno"] == 2
    (stored,) = _reader().list_import_errors()
    assert stored["filename"] == "example etl(v2).py" and stored["lineno"] == 2
    assert "RuntimeError: boom" in stored["stacktrace"]


@pytest.mark.slow
def test_a_dag_id_already_defined_by_another_file_is_an_import_error(handler_module, capsys):
    handler, s3 = handler_module
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE)
    handler.handler(json.loads((EVENTS / "s3_object_created.json").read_text()), lambda_context("parser"))
    assert _metrics(capsys) == {"DagFilesParsed": [1.0], "ImportErrors": [0.0]}
    s3.put_object(Bucket=BUCKET, Key="dags/copy.py", Body=DAG_FILE)
    event = json.loads((EVENTS / "s3_object_created.json").read_text())
    event["Records"][0]["s3"]["object"]["key"] = "dags/copy.py"

    entry = handler.handler(event, lambda_context("parser"))["parsed"]["dags/copy.py"]
    assert _metrics(capsys) == {"DagFilesParsed": [1.0], "ImportErrors": [1.0]}

    assert entry["store"]["duplicates"] == ["from_s3"]
    message = ("AirflowDagDuplicatedIdException: Ignoring DAG from_s3 from copy.py - also found in "
               "example etl(v2).py")
    assert [e["message"] for e in entry["import_errors"]] == [message]
    assert [e["message"] for e in _reader().list_import_errors()] == [message]
    assert _reader().get_dag_meta("from_s3").relative_fileloc == "example etl(v2).py"


def test_removed_event_reports_the_key(handler_module, capsys):
    handler, _ = handler_module
    result = handler.handler(json.loads((EVENTS / "s3_object_removed.json").read_text()), lambda_context("parser"))
    assert result == {"parsed": {}, "removed": [KEY], "deactivated": {KEY: []}}
    assert _metrics(capsys) == {"DagFilesParsed": [0.0], "ImportErrors": [0.0]}


def test_removed_event_deactivates_the_files_dags(handler_module):
    handler, s3 = handler_module
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE)
    handler.handler(json.loads((EVENTS / "s3_object_created.json").read_text()), lambda_context("parser"))
    s3.delete_object(Bucket=BUCKET, Key=KEY)
    removed = json.loads((EVENTS / "s3_object_removed.json").read_text())

    assert handler.handler(removed, lambda_context("parser"))["deactivated"] == {KEY: ["from_s3"]}
    assert _reader().get_dag_meta("from_s3").is_active is False
    assert handler.handler(removed, lambda_context("parser"))["deactivated"] == {KEY: []}  # redelivered


def test_events_outside_the_dags_prefix_are_ignored(handler_module):
    handler, _ = handler_module
    event = json.loads((EVENTS / "s3_object_created.json").read_text())
    event["Records"][0]["s3"]["object"]["key"] = "logs/run.log"
    assert handler.handler(event, lambda_context("parser")) == {"parsed": {}, "removed": [], "deactivated": {}}


@pytest.mark.filterwarnings("ignore:No application metrics to publish")  # it fails before counting anything
def test_malformed_event_is_a_clear_error(handler_module):
    handler, _ = handler_module
    with pytest.raises(ValueError, match="no 'Records' list"):
        handler.handler({"detail-type": "Scheduled Event"}, lambda_context("parser"))


def test_the_configured_dags_prefix_is_honoured(handler_module, monkeypatch):
    """UPDRAFT_DAGS_PREFIX moves the DAGs folder (as the worker reads it): keys under it are parsed, relative to
    it and with its siblings; keys under the default ``dags/`` are then outside it and ignored."""
    handler, s3 = handler_module
    monkeypatch.setenv("UPDRAFT_DAGS_PREFIX", "code/dags")
    s3.put_object(Bucket=BUCKET, Key="code/dags/helpers.py", Body=b"TASK_IDS = ['first']\n")
    s3.put_object(Bucket=BUCKET, Key="code/dags/team/etl.py", Body=DAG_FILE)
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE)
    event = json.loads((EVENTS / "s3_object_created.json").read_text())
    outside = json.loads(json.dumps(event))
    event["Records"][0]["s3"]["object"]["key"] = "code/dags/team/etl.py"

    entry = handler.handler(event, lambda_context("parser"))["parsed"]["code/dags/team/etl.py"]
    assert entry["relative_path"] == "team/etl.py" and entry["dag_ids"] == ["from_s3"]
    assert entry["import_errors"] == []
    assert _reader().get_dag_meta("from_s3").relative_fileloc == "team/etl.py"
    assert handler.handler(outside, lambda_context("parser")) == {"parsed": {}, "removed": [],
                                                                  "deactivated": {}}


def test_records_of_another_bucket_or_with_a_bad_key_are_rejected_and_the_others_parsed(handler_module, capsys):
    """Issue 18: the parser trusted the bucket named in the event and failed a whole event on one bad key."""
    handler, s3 = handler_module
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE)
    s3.put_object(Bucket=BUCKET, Key="dags/second.py", Body=DAG_FILE.replace(b'"from_s3"', b'"second"'))
    event = json.loads((EVENTS / "s3_mixed_records.json").read_text())

    result = handler.handler(event, lambda_context("parser"))

    assert sorted(result["parsed"]) == ["dags/example etl(v2).py", "dags/second.py"]
    assert result["parsed"]["dags/second.py"]["dag_ids"] == ["second"]
    assert set(result["rejected"]) == {"s3://someone-elses-bucket/dags/example etl(v2).py",
                                       f"s3://{BUCKET}/dags/../../etc/cron.py"}
    assert "not this environment's bucket" in result["rejected"]["s3://someone-elses-bucket/dags/example etl(v2).py"]
    assert _metrics(capsys)["RejectedRecords"] == [2.0]


def test_one_files_failure_is_reported_and_the_other_files_are_stored(handler_module, monkeypatch, capsys):
    handler, s3 = handler_module
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE)
    s3.put_object(Bucket=BUCKET, Key="dags/second.py", Body=DAG_FILE.replace(b'"from_s3"', b'"second"'))
    from updraft.scheduling.commands import dag_registration

    register = dag_registration.register_parsed_file

    def failing_for_the_first(store, parsed, **kwargs):
        if parsed.relative_path == "example etl(v2).py":
            raise RuntimeError("throttled")
        return register(store, parsed, **kwargs)

    monkeypatch.setattr(dag_registration, "register_parsed_file", failing_for_the_first)
    event = json.loads((EVENTS / "s3_mixed_records.json").read_text())
    with pytest.raises(ParseHandlingFailed, match="example"):  # Lambda delivers the event again
        handler.handler(event, lambda_context("parser"))
    assert _reader().get_dag_meta("second") is not None  # the other file was handled first
    assert _reader().get_file_record("example etl(v2).py").parse_failures == 1
    assert _metrics(capsys)["FailedDagFiles"] == [1.0]


def test_a_file_whose_handling_failed_is_handled_again_by_the_redelivered_event(handler_module, monkeypatch):
    handler, s3 = handler_module
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE)
    calls = failing_registration(monkeypatch, times=2)
    event = json.loads((EVENTS / "s3_object_created.json").read_text())
    for _ in range(2):  # Lambda's two retries of an asynchronous event
        with pytest.raises(ParseHandlingFailed):
            handler.handler(event, lambda_context("parser"))
    assert _reader().get_dag_meta("from_s3") is None
    result = handler.handler(event, lambda_context("parser"))
    assert result["parsed"][KEY]["dag_ids"] == ["from_s3"] and "retry" not in result and len(calls) == 3
    record = _reader().get_file_record("example etl(v2).py")
    assert record.parse_failures == 0 and record.import_errors == [] and _reader().get_dag_meta("from_s3")
    assert handler.handler(event, lambda_context("parser"))["parsed"][KEY]["store"]["unchanged"] == ["from_s3"]


def test_a_file_whose_handling_keeps_failing_gets_an_import_error_at_the_last_attempt(handler_module, monkeypatch):
    handler, s3 = handler_module
    monkeypatch.setenv("UPDRAFT_PARSE_ATTEMPTS", "2")
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE)
    failing_registration(monkeypatch, times=None)
    event = json.loads((EVENTS / "s3_object_created.json").read_text())
    with pytest.raises(ParseHandlingFailed):
        handler.handler(event, lambda_context("parser"))
    assert _reader().list_import_errors() == []  # attempts left: no error shown yet
    result = handler.handler(event, lambda_context("parser"))  # the last attempt: no raise, so no more retries
    assert "retry" not in result and result["failed"] == {KEY: "RuntimeError: injected failure (attempt 2)"}
    (error,) = _reader().list_import_errors()
    assert error["filename"] == "example etl(v2).py"
    assert error["message"].startswith("UpdraftParseHandlingFailed: Updraft could not handle the parse of this file "
                                       "(2 attempts; not an error in the file): RuntimeError: injected failure (attempt 2)")
    # A new version of the file starts its count again.
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE + b"\n")
    with pytest.raises(ParseHandlingFailed):
        handler.handler(event, lambda_context("parser"))
    assert _reader().get_file_record("example etl(v2).py").parse_failures == 1


def test_without_a_configured_bucket_no_record_is_trusted(handler_module, monkeypatch):
    handler, s3 = handler_module
    monkeypatch.delenv("UPDRAFT_BUCKET")
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE)
    result = handler.handler(json.loads((EVENTS / "s3_object_created.json").read_text()), lambda_context("parser"))
    assert result["parsed"] == {} and "UPDRAFT_BUCKET" in result["rejected"][f"s3://{BUCKET}/{KEY}"]


def test_every_parse_records_the_dag_processor_s_heartbeat_for_the_health_route(handler_module):
    handler, s3 = handler_module
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=DAG_FILE)
    handler.handler(json.loads((EVENTS / "s3_object_created.json").read_text()), lambda_context("parser"))
    assert _reader().last_heartbeat("dag_processor") is not None
