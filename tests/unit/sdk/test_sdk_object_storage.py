"""``airflow.sdk.ObjectStoragePath`` on moto's S3 (in-process) and the local filesystem: Airflow's path semantics
(conn_id in the URL, str, /, open/read/write, iterdir/glob, copy/move across stores), the S3 filesystem over boto3
that stands in for s3fs, XCom's serde round trip, and the refusals (another AWS connection, s3 storage options)."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from airflow.sdk import ObjectStoragePath
from airflow.sdk.io import attach, get_fs, has_fs
from updraft.runtime.xcom import decode_value, encode_value
from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.sdk.io.s3 import S3FileSystem


@pytest.fixture(scope="module")
def s3():
    with mock_aws():
        yield boto3.client("s3", region_name="us-east-1")


@pytest.fixture
def base(s3, request):
    bucket = request.node.name.replace("_", "-")[:50].lower()
    path = ObjectStoragePath(f"s3://aws_default@{bucket}/")
    path.mkdir(exist_ok=True)  # the bucket, as in Airflow's tutorial
    return path


def test_the_conn_id_comes_from_the_url_and_stays_in_str(base):
    path = base / "air_quality_20240102.parquet"
    assert (path.conn_id, path.protocol, path.bucket, path.key) == (
        "aws_default", "s3", base.bucket, "air_quality_20240102.parquet")
    assert str(path) == f"s3://aws_default@{base.bucket}/air_quality_20240102.parquet"
    assert path.path == f"{base.bucket}/air_quality_20240102.parquet"
    assert ObjectStoragePath("s3://b/k", conn_id="aws_default") == ObjectStoragePath("s3://aws_default@b/k")
    assert ObjectStoragePath("s3://b/k") != ObjectStoragePath("s3://aws_default@b/k")  # another store
    assert isinstance(path.fs, S3FileSystem) and path.fs is attach("s3", "aws_default").fs


def test_write_read_stat_and_delete(base, s3):
    path = base / "data" / "file.bin"
    with path.open("wb") as f:
        f.write(b"hello world")
    assert s3.get_object(Bucket=base.bucket, Key="data/file.bin")["Body"].read() == b"hello world"
    assert path.read_bytes() == b"hello world" and path.exists() and path.is_file()
    assert (base / "data").is_dir() and not (base / "data").is_file()
    assert path.stat().st_size == 11 and path.size() == 11 and path.stat()["conn_id"] == "aws_default"
    assert path.read_block(6, 5) == b"world"
    (base / "text.txt").write_text("héllo")
    assert (base / "text.txt").read_text() == "héllo"
    path.unlink()
    assert not path.exists()
    with pytest.raises(FileNotFoundError):
        path.read_bytes()


def test_a_file_past_one_block_is_a_multipart_upload(base):
    path = base / "big.bin"
    payload = b"0" * (5 * 2**20) + b"tail"
    with path.open("wb") as f:
        f.write(payload)
    assert path.size() == len(payload) and path.read_block(5 * 2**20, 10) == b"tail"


def test_iterdir_and_glob_list_a_directory_and_its_tree(base, s3):
    for key in ("a.txt", "dir/b.txt", "dir/c.csv", "dir/sub/d.csv"):
        s3.put_object(Bucket=base.bucket, Key=key, Body=b"x")
    assert sorted(p.name for p in base.iterdir()) == ["a.txt", "dir"]
    assert sorted(p.key for p in base.glob("dir/*.txt")) == ["dir/b.txt"]
    assert sorted(p.key for p in base.rglob("*.csv")) == ["dir/c.csv", "dir/sub/d.csv"]
    assert all(p.conn_id == "aws_default" for p in base.rglob("*"))


def test_copy_and_move_within_s3_and_to_local_files(base, tmp_path):
    src = base / "src" / "one.txt"
    src.write_text("one")
    src.copy(base / "copied.txt")
    assert (base / "copied.txt").read_text() == "one"
    (base / "copied.txt").move(base / "moved.txt")
    assert not (base / "copied.txt").exists() and (base / "moved.txt").read_text() == "one"
    local = ObjectStoragePath(f"file://{tmp_path}/")
    src.copy(local / "one.txt")
    assert (tmp_path / "one.txt").read_text() == "one"
    (local / "one.txt").move(base / "back.txt")  # local -> s3: put, then the local file goes
    assert (base / "back.txt").read_text() == "one" and not (tmp_path / "one.txt").exists()


def test_local_paths_and_an_attached_filesystem(tmp_path):
    from fsspec.implementations.memory import MemoryFileSystem

    local = ObjectStoragePath(f"file://{tmp_path}") / "x.txt"
    local.write_text("local")
    assert (tmp_path / "x.txt").read_text() == "local" and local.read_text() == "local"
    assert has_fs("s3") and has_fs("file") and not has_fs("gcs")
    with pytest.raises(ValueError, match="No filesystem registered for scheme gcs"):
        get_fs("gcs")
    store = attach("memory", alias="mem", fs=MemoryFileSystem())
    assert attach(alias="mem") is store
    mem = ObjectStoragePath("memory://bucket/k.txt")
    mem.write_text("in memory")
    assert store.fs.cat_file("/bucket/k.txt") == b"in memory"


def test_xcom_round_trip_is_airflow_serde_shape(base):
    path = base / "result.parquet"
    encoded = encode_value(path)
    assert encoded == {"__classname__": "airflow.sdk.io.path.ObjectStoragePath", "__version__": 1,
                       "__data__": {"path": str(path), "conn_id": "aws_default", "kwargs": {}}}
    back = decode_value(encoded)
    assert back == path and back.conn_id == "aws_default" and back.fs is path.fs


@pytest.mark.parametrize(("build", "named"), [
    (lambda: ObjectStoragePath("s3://my_conn@bucket/key"), "conn_id='my_conn'"),
    (lambda: ObjectStoragePath("s3://bucket/key", anon=True), "s3 storage options ['anon']"),
    (lambda: attach("s3", "other_conn").fs, "conn_id='other_conn'"),
    (lambda: attach("s3", encryption_type="aws:kms"), "encryption_type='aws:kms'"),
])
def test_what_updraft_cannot_honour_is_refused_by_name(build, named):
    with pytest.raises(UnsupportedFeatureError, match=named.replace("[", r"\[").replace("]", r"\]")):
        build()
