"""A DAG file's top-level code, parsed by the parser Lambda's own handler as Lambda runs it (one non-root user for
every process), reads neither the handler's environment (its AWS credentials and settings) nor the memory of any
process of the parse: the handler's, the fork server's, a sibling file's child's (issue 34)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.functional.privacy.unprivileged import (
    MARKER,
    assert_nothing_reached,
    findings,
    probe_code,
    python_path,
    unprivileged,
)

pytestmark = pytest.mark.slow

BUCKET, TABLE = "updraft-dev-data", "updraft-privacy"

# Runs as the Lambda runtime's process would: Updraft's credentials and settings in its environment, the parser
# handler imported, an S3 event for two DAG files (two children of the fork server at once).
DRIVER = """
import json, os, sys
import boto3
from moto import mock_aws

out, files = sys.argv[1], json.loads(sys.argv[2])
bucket, table = os.environ["UPDRAFT_BUCKET"], os.environ["UPDRAFT_TABLE"]
with mock_aws():
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    from updraft.store.config import StoreConfig
    from updraft.store.tables import create_table

    create_table(StoreConfig(table_name=table, region="us-east-1"))
    records = []
    for name, body in files.items():
        version = s3.put_object(Bucket=bucket, Key="dags/" + name, Body=body.encode())["VersionId"]
        records.append({"eventSource": "aws:s3", "eventName": "ObjectCreated:Put", "awsRegion": "us-east-1",
                        "s3": {"bucket": {"name": bucket}, "object": {"key": "dags/" + name, "versionId": version}}})
    from functions.parser import handler
    from types import SimpleNamespace

    context = SimpleNamespace(function_name="parser", memory_limit_in_mb=1024, aws_request_id="r",
                              invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:parser")
    result = handler.handler({"Records": records}, context)
    print(json.dumps({key: entry["dag_ids"] for key, entry in result["parsed"].items()}))
"""


def _dag_file(where: str, out: Path) -> str:
    return probe_code() + f"""
import time
from airflow.sdk import DAG

probe({str(out)!r}, {where!r})
time.sleep(0.5)  # the other file's child is alive while it looks
with DAG(dag_id={where!r}, schedule=None):
    pass
"""


def test_parse_time_code_reads_no_process_of_the_parser_lambda(work: Path) -> None:
    out = work / "found.jsonl"
    files = {f"{where}.py": _dag_file(where, out) for where in ("first", "second")}
    env = {"PATH": os.environ["PATH"], "HOME": str(work), "TMPDIR": str(work), "PYTHONPATH": python_path(),
           "AWS_ACCESS_KEY_ID": MARKER, "AWS_SECRET_ACCESS_KEY": f"{MARKER}-secret", "AWS_SESSION_TOKEN": MARKER,
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "UPDRAFT_TABLE": TABLE,
           "UPDRAFT_BUCKET": BUCKET, "POWERTOOLS_METRICS_DISABLED": "true"}
    done = subprocess.run(unprivileged([sys.executable, "-c", DRIVER, str(out), json.dumps(files)]), cwd=work,
                          env=env, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"dags/first.py": ["first"], "dags/second.py": ["second"]}
    found = findings(out)
    assert set(found) == {"first", "second", "first (grandchild)", "second (grandchild)"}, found
    for entry in found.values():
        assert_nothing_reached(entry)
