"""The worker's DAG loader: S3-mirrored files, per-content caching, missing DAGs and tasks."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from updraft.runtime.loader import LocalDagLoader, S3DagLoader, find_task
from updraft.sdk.exceptions import DagNotFound, TaskNotFound

SOURCE = """
import datetime
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator
with DAG("{dag_id}", schedule=None, start_date=datetime.datetime(2024, 1, 1)):
    EmptyOperator(task_id="{task_id}")
"""


def test_s3_loader_mirrors_the_bucket_and_reimports_a_changed_file(tmp_path):
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="dag-bucket")
        s3.put_object(Bucket="dag-bucket", Key="dags/sub/one.py", Body=SOURCE.format(dag_id="one", task_id="a").encode())
        loader = S3DagLoader(s3, "dag-bucket", "dags/", tmp_path / "work")
        dag = loader.load_dag("one", "sub/one.py")
        assert find_task(dag, "a").task_id == "a"
        assert loader.load_dag("one", "sub/one.py") is dag  # same content: cached
        s3.put_object(Bucket="dag-bucket", Key="dags/sub/one.py", Body=SOURCE.format(dag_id="one", task_id="b").encode())
        changed = loader.load_dag("one", "sub/one.py")
        assert changed is not dag and set(changed.task_dict) == {"b"}
        with pytest.raises(TaskNotFound):
            find_task(changed, "a")


def test_s3_loader_lists_the_bucket_again_only_when_the_pinned_version_is_not_here_or_the_mirror_is_old(tmp_path):
    import hashlib

    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="dag-bucket")
        first = SOURCE.format(dag_id="one", task_id="a").encode()
        s3.put_object(Bucket="dag-bucket", Key="dags/one.py", Body=first)
        loader = S3DagLoader(s3, "dag-bucket", "dags/", tmp_path / "work", reuse_s=60)
        listed = []
        original = s3.list_objects_v2
        s3.list_objects_v2 = lambda **kw: listed.append(kw) or original(**kw)
        pinned = hashlib.sha256(first).hexdigest()
        loader.load_dag("one", "one.py", pinned)
        loader.load_dag("one", "one.py", pinned)
        assert len(listed) == 1  # the pinned version is here and was mirrored moments ago
        second = SOURCE.format(dag_id="one", task_id="b").encode()
        s3.put_object(Bucket="dag-bucket", Key="dags/one.py", Body=second)
        dag = loader.load_dag("one", "one.py", hashlib.sha256(second).hexdigest())
        assert len(listed) == 2 and set(dag.task_dict) == {"b"}  # a run pinned to a newer version syncs at once
        loader.reuse_s = 0
        loader.load_dag("one", "one.py", hashlib.sha256(second).hexdigest())
        assert len(listed) == 3  # an old mirror is refreshed whatever the pin


def test_local_loader_errors_name_the_dag_and_file(tmp_path):
    (tmp_path / "f.py").write_text(SOURCE.format(dag_id="f", task_id="a"))
    loader = LocalDagLoader(tmp_path)
    with pytest.raises(DagNotFound, match=r"'other' not found in 'f\.py'"):
        loader.load_dag("other", "f.py")
    with pytest.raises(DagNotFound, match="cannot be read"):
        loader.load_dag("f", "missing.py")


def test_s3_log_sink_writes_and_reads_one_object_per_try():
    from updraft.model.records import TIKey
    from updraft.runtime.logs import S3LogSink

    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="log-bucket")
        sink = S3LogSink(s3, "log-bucket")
        key = TIKey("d", "manual__x", "t", 2)
        sink.write(key, 1, "hello\n")
        assert sink.read(key, 1) == "hello\n"
        assert sink.read(key, 2) is None
        assert sink.key(key, 1) == "logs/d/manual__x/t/2/1.log"
