"""The parser Lambda's entry point against an embedded S3 (moto)."""

from __future__ import annotations

import os

import boto3
import pytest
from moto import mock_aws

from updraft.parsing.options import ParseOptions
from updraft.parsing.s3 import DagFileNotFound, parse_s3_dag_file, sync_prefix

BUCKET = "updraft-env"
OPTIONS = ParseOptions(timeout_s=2.0)

HELPER = """\
PREFIX = "{prefix}"
"""

DAG_FILE = """\
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator
from helpers import PREFIX

with DAG(dag_id=f"{PREFIX}_dag", schedule=None):
    EmptyOperator(task_id="t")
"""


@pytest.fixture
def s3():
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield client


def put(s3, key: str, body: str) -> dict:
    return s3.put_object(Bucket=BUCKET, Key=key, Body=body.encode())


def test_parses_the_named_file_with_its_siblings(s3, tmp_path):
    put(s3, "dags/helpers.py", HELPER.format(prefix="sales"))
    put(s3, "dags/team/report.py", DAG_FILE)
    put(s3, "other/ignored.py", "raise SystemExit('outside the prefix')")
    parsed = parse_s3_dag_file(s3, BUCKET, "dags/team/report.py", workdir=tmp_path, options=OPTIONS)
    assert parsed.import_errors == []
    assert parsed.relative_path == "team/report.py"
    assert parsed.dag_ids == ["sales_dag"]
    assert parsed.dags[0]["dag"]["relative_fileloc"] == "team/report.py"
    etag = s3.head_object(Bucket=BUCKET, Key="dags/team/report.py")["ETag"].strip('"')
    assert parsed.file_version == etag  # unversioned bucket: the ETag is the version
    assert not (tmp_path / "other").exists()


def test_versioned_bucket_reports_the_version_id(s3, tmp_path):
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    put(s3, "dags/helpers.py", HELPER.format(prefix="v"))
    version = put(s3, "dags/report.py", DAG_FILE)["VersionId"]
    parsed = parse_s3_dag_file(s3, BUCKET, "dags/report.py", workdir=tmp_path, options=OPTIONS)
    assert parsed.file_version == version


def test_sync_downloads_only_changes_and_deletes_removed_objects(s3, tmp_path, monkeypatch):
    # As in Lambda, children may write bytecode for the siblings they import
    # (a fresh fork server, started by the distinct options below, inherits this).
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    options = ParseOptions(timeout_s=2.5)
    put(s3, "dags/helpers.py", HELPER.format(prefix="one"))
    put(s3, "dags/report.py", DAG_FILE)
    put(s3, "dags/old.py", "x = 1\n")
    first = sync_prefix(s3, BUCKET, "dags/", tmp_path)
    assert sorted(first.downloaded) == ["helpers.py", "old.py", "report.py"]
    # helpers.py is imported (and its bytecode cached) before it changes to
    # same-sized content within the same second (pinned mtime below).
    os.utime(tmp_path / "helpers.py", (1_700_000_000, 1_700_000_000))
    assert parse_s3_dag_file(s3, BUCKET, "dags/report.py", workdir=tmp_path, options=options).dag_ids == [
        "one_dag"
    ]
    assert list((tmp_path / "__pycache__").glob("helpers.*.pyc"))

    put(s3, "dags/helpers.py", HELPER.format(prefix="two"))
    s3.delete_object(Bucket=BUCKET, Key="dags/old.py")
    second = sync_prefix(s3, BUCKET, "dags/", tmp_path)
    os.utime(tmp_path / "helpers.py", (1_700_000_000, 1_700_000_000))
    assert second.downloaded == ["helpers.py"]
    assert second.deleted == ["old.py"] and second.unchanged == 1
    assert not (tmp_path / "old.py").exists()

    parsed = parse_s3_dag_file(s3, BUCKET, "dags/report.py", workdir=tmp_path, options=options)
    assert parsed.dag_ids == ["two_dag"]  # the changed sibling is what the file imported


def test_import_error_in_the_file(s3, tmp_path):
    put(s3, "dags/broken.py", "from airflow.sdk import DAG\n\nraise RuntimeError('boom')\n")
    parsed = parse_s3_dag_file(s3, BUCKET, "dags/broken.py", workdir=tmp_path, options=OPTIONS)
    [err] = parsed.import_errors
    assert err.filename == "broken.py" and err.lineno == 3 and err.message == "RuntimeError: boom"


def test_skipped_like_a_folder_parse_would(s3, tmp_path):
    put(s3, "dags/.airflowignore", "scratch/\n")
    put(s3, "dags/scratch/wip.py", "from airflow.sdk import DAG\nraise RuntimeError('must not run')\n")
    put(s3, "dags/util.py", "def f():\n    return 1\n")
    ignored = parse_s3_dag_file(s3, BUCKET, "dags/scratch/wip.py", workdir=tmp_path, options=OPTIONS)
    assert ignored.dags == [] and ignored.import_errors == [] and ".airflowignore" in ignored.logs
    helper = parse_s3_dag_file(s3, BUCKET, "dags/util.py", workdir=tmp_path, options=OPTIONS)
    assert helper.dags == [] and helper.import_errors == [] and "safe mode" in helper.logs


def test_bad_keys(s3, tmp_path):
    with pytest.raises(ValueError):
        parse_s3_dag_file(s3, BUCKET, "other/x.py", workdir=tmp_path)
    with pytest.raises(ValueError):
        parse_s3_dag_file(s3, BUCKET, "dags/readme.md", workdir=tmp_path)
    with pytest.raises(ValueError):
        parse_s3_dag_file(s3, BUCKET, "dags/../escape.py", workdir=tmp_path)
    with pytest.raises(DagFileNotFound):
        parse_s3_dag_file(s3, BUCKET, "dags/gone.py", workdir=tmp_path)


def test_crafted_keys_never_escape_the_work_folder(s3, tmp_path):
    work = tmp_path / "work"
    put(s3, "dags/../../escape.py", "x = 1\n")
    put(s3, "dags//abs.py", "x = 1\n")
    put(s3, "dags/ok.py", "x = 1\n")
    report = sync_prefix(s3, BUCKET, "dags/", work)
    assert report.downloaded == ["ok.py"]
    assert not (tmp_path / "escape.py").exists()
