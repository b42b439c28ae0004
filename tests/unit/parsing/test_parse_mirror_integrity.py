"""The local mirror of the DAGs prefix is never trusted on its ETag alone (issue 18).

Code that runs from the mirror (a DAG file at parse time, a task in a warm worker) can rewrite it; the next parse
of another file, or the next task, must still run what S3 holds.
"""

from __future__ import annotations

import hashlib

import boto3
import pytest
from moto import mock_aws

from updraft.parsing.options import ParseOptions
from updraft.parsing.s3 import parse_s3_dag_file, sync_prefix
from updraft.runtime.loader import S3DagLoader

BUCKET = "updraft-env"
OPTIONS = ParseOptions(timeout_s=5.0)
HELPER = 'PREFIX = "sales"\n'
REPORT = """\
from airflow.sdk import DAG
from mirror_helper import PREFIX

with DAG(dag_id=f"{PREFIX}_dag", schedule=None):
    pass
"""
REWRITER = """\
import os
from airflow.sdk import DAG
open(os.path.join(os.path.dirname(__file__), "mirror_helper.py"), "w").write('PREFIX = "evil"\\n')
"""
# Plants bytecode of other code under the helper's unchanged source: CPython checks only size and mtime.
PLANTER = """\
import importlib.util, os, py_compile
from airflow.sdk import DAG
helper = os.path.join(os.path.dirname(__file__), "mirror_helper.py")
original, stat = open(helper).read(), os.stat(helper)
for body in ('PREFIX = "evils"\\n', original):
    open(helper, "w").write(body)
    os.utime(helper, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    if body != original:
        py_compile.compile(helper, cfile=importlib.util.cache_from_source(helper), doraise=True)
"""


@pytest.fixture
def s3():
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        for key, body in {"dags/mirror_helper.py": HELPER, "dags/report.py": REPORT, "dags/rewriter.py": REWRITER,
                          "dags/planter.py": PLANTER}.items():
            client.put_object(Bucket=BUCKET, Key=key, Body=body.encode())
        yield client


@pytest.mark.parametrize("attacker", ["dags/rewriter.py", "dags/planter.py"])
def test_a_dag_file_that_rewrites_the_mirror_does_not_change_another_dags_next_parse(s3, tmp_path, attacker,
                                                                                    monkeypatch):
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # as in Lambda: bytecode is cached
    assert parse_s3_dag_file(s3, BUCKET, "dags/report.py", workdir=tmp_path, options=OPTIONS).dag_ids == [
        "sales_dag"]
    parse_s3_dag_file(s3, BUCKET, attacker, workdir=tmp_path, options=OPTIONS)
    assert parse_s3_dag_file(s3, BUCKET, "dags/report.py", workdir=tmp_path, options=OPTIONS).dag_ids == [
        "sales_dag"]


def test_a_copy_changed_since_it_was_downloaded_is_downloaded_again(s3, tmp_path):
    sync_prefix(s3, BUCKET, "dags/", tmp_path)
    (tmp_path / "mirror_helper.py").write_text('PREFIX = "evil"\n')
    report = sync_prefix(s3, BUCKET, "dags/", tmp_path)
    assert report.downloaded == ["mirror_helper.py"]
    assert (tmp_path / "mirror_helper.py").read_text() == HELPER


def test_a_mirror_this_process_did_not_download_is_not_trusted(s3, tmp_path):
    """A folder left by an earlier process (or planted with a matching manifest) is downloaded afresh."""
    (tmp_path / "mirror_helper.py").write_text('PREFIX = "evil"\n')
    report = sync_prefix(s3, BUCKET, "dags/", tmp_path)
    assert "mirror_helper.py" in report.downloaded and (tmp_path / "mirror_helper.py").read_text() == HELPER


def test_a_warm_worker_runs_the_task_code_s3_holds_after_its_copy_was_rewritten(s3, tmp_path):
    loader = S3DagLoader(s3, BUCKET, "dags/", tmp_path / "worker")
    pinned = hashlib.sha256(REPORT.encode()).hexdigest()
    assert loader.load_dag("sales_dag", "report.py", pinned).dag_id == "sales_dag"
    (tmp_path / "worker" / "report.py").write_text(REPORT.replace('f"{PREFIX}_dag"', '"evil_dag"'))
    assert loader.load_dag("sales_dag", "report.py", pinned).dag_id == "sales_dag"
