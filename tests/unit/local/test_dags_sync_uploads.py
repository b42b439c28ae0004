"""Files added with ``updraft dags upload`` survive a restart of local mode (issue 18, found by a new user).

``--state-dir`` keeps the bucket, but the first folder sync after a restart deleted every object the DAGs folder
did not hold, uploads included.
"""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from updraft.local.dags_sync import DagsFolderSync

BUCKET = "updraft-local"


@pytest.fixture
def s3():
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield client


def keys(s3) -> list[str]:
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", []))


def test_a_restart_keeps_uploaded_files_and_removes_files_gone_from_the_folder(s3, tmp_path):
    folder = tmp_path / "dags"
    folder.mkdir()
    (folder / "mine.py").write_text("x = 1\n")
    (folder / "gone.py").write_text("y = 1\n")
    removed: list[str] = []
    first = DagsFolderSync(s3, BUCKET, "dags/", folder, on_removed=lambda key, version: removed.append(key))
    first.sync_once()
    s3.put_object(Bucket=BUCKET, Key="dags/uploaded.py", Body=b"z = 1\n")  # `updraft dags upload`
    assert not first.sync_once()

    (folder / "gone.py").unlink()  # while local mode was stopped
    restarted = DagsFolderSync(s3, BUCKET, "dags/", folder, on_removed=lambda key, version: removed.append(key))
    report = restarted.sync_once()

    assert report.removed == ["gone.py"] and removed == ["dags/gone.py"]
    assert keys(s3) == ["dags/mine.py", "dags/uploaded.py"]
    assert not restarted.sync_once()  # asked once, then left alone


def test_a_folder_file_of_an_uploaded_name_takes_it_over(s3, tmp_path):
    folder = tmp_path / "dags"
    folder.mkdir()
    s3.put_object(Bucket=BUCKET, Key="dags/shared.py", Body=b"old = 1\n")
    (folder / "shared.py").write_text("new = 1\n")
    sync = DagsFolderSync(s3, BUCKET, "dags/", folder)
    assert sync.sync_once().uploaded == ["shared.py"]
    (folder / "shared.py").unlink()
    assert sync.sync_once().removed == ["shared.py"] and keys(s3) == []


def test_the_folders_mark_survives_a_state_dir_snapshot(s3, tmp_path):
    """``--state-dir`` restores the bucket from a snapshot: what the folder uploaded is still known as its own."""
    from updraft.local.snapshot import StateDir

    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    dynamodb.create_table(TableName="t", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                          BillingMode="PAY_PER_REQUEST")
    folder = tmp_path / "dags"
    folder.mkdir()
    (folder / "gone.py").write_text("y = 1\n")
    DagsFolderSync(s3, BUCKET, "dags/", folder).sync_once()
    s3.put_object(Bucket=BUCKET, Key="dags/uploaded.py", Body=b"z = 1\n")
    state = StateDir(tmp_path / "state")
    state.save(dynamodb, s3, "t", BUCKET)
    for key in keys(s3):
        s3.delete_object(Bucket=BUCKET, Key=key)
    state.restore(dynamodb, s3, "t", BUCKET)

    (folder / "gone.py").unlink()
    assert DagsFolderSync(s3, BUCKET, "dags/", folder).sync_once().removed == ["gone.py"]
    assert keys(s3) == ["dags/uploaded.py"]
