"""An fsspec filesystem for ``s3://`` over boto3, for ``ObjectStoragePath`` in task code.

Airflow gets its S3 filesystem from the Amazon provider, which builds an ``s3fs.S3FileSystem``. s3fs is not
among Updraft's own packages (it would bring aiobotocore, which pins botocore to a narrow range, into every
environment, and ``ObjectStoragePath`` must work without the Amazon provider). This is the same filesystem over
the synchronous boto3 client instead: listings with ``/`` as the directory separator, ranged
reads, writes as one ``PutObject`` (or a multipart upload past ``block_size``), server-side copies, buckets as
the top-level directories.

The client comes from ``session_factory`` (``boto3.Session`` by default): in a task that is the environment's
DAG-code role (the task child's environment holds its credentials, and local mode's endpoint), never Updraft's.
It is made on first use, so a DAG file that builds paths at parse time makes no AWS call.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from fsspec.spec import AbstractBufferedFile, AbstractFileSystem

MIN_PART_SIZE = 5 * 2**20  # S3's smallest part of a multipart upload (but the last)


def _missing(error: Exception) -> bool:
    code = getattr(error, "response", {}).get("Error", {}).get("Code", "")
    return code in ("404", "NoSuchKey", "NoSuchBucket", "NotFound")


class S3FileSystem(AbstractFileSystem):
    """``s3://bucket/key`` paths on boto3 (see the module notes)."""

    protocol = ("s3", "s3a")
    root_marker = ""
    cachable = False  # one per ObjectStore (attach), which caches it

    def __init__(self, session_factory: Callable[[], Any] | None = None, *, region_name: str | None = None,
                 endpoint_url: str | None = None, **storage_options: Any) -> None:
        super().__init__(**storage_options)
        self._session_factory = session_factory
        self.region_name = region_name
        self.endpoint_url = endpoint_url
        self._s3: Any = None

    @property
    def s3(self) -> Any:
        """The boto3 S3 client, made on first use."""
        if self._s3 is None:
            if self._session_factory is None:
                import boto3

                self._session_factory = boto3.Session
            self._s3 = self._session_factory().client("s3", region_name=self.region_name,
                                                      endpoint_url=self.endpoint_url)
        return self._s3

    @property
    def fsid(self) -> str:
        return "s3"

    @staticmethod
    def split_path(path: str) -> tuple[str, str]:
        """(bucket, key) of a path without its protocol."""
        bucket, _, key = path.lstrip("/").partition("/")
        return bucket, key

    # -- reading the tree ------------------------------------------------------------------------------------
    def _bucket_info(self, bucket: str) -> dict[str, Any]:
        try:
            self.s3.head_bucket(Bucket=bucket)
        except Exception as exc:
            if _missing(exc):
                raise FileNotFoundError(bucket) from exc
            raise
        return {"name": bucket, "size": 0, "type": "directory"}

    def _object_info(self, bucket: str, key: str, head: dict[str, Any]) -> dict[str, Any]:
        return {"name": f"{bucket}/{key}", "size": head.get("ContentLength", head.get("Size", 0)), "type": "file",
                "LastModified": head.get("LastModified"), "ETag": head.get("ETag")}

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        path = self._strip_protocol(path)
        bucket, key = self.split_path(path)
        if not bucket:
            entries = [{"name": b["Name"], "size": 0, "type": "directory"}
                       for b in self.s3.list_buckets().get("Buckets", [])]
        else:
            entries = self._list(bucket, key)
            if not entries:
                info = self.info(path)  # a file lists as itself; an empty bucket as nothing; else not found
                entries = [info] if info["type"] == "file" else []
        return entries if detail else [e["name"] for e in entries]

    def _list(self, bucket: str, key: str) -> list[dict[str, Any]]:
        prefix = f"{key.rstrip('/')}/" if key else ""
        entries: list[dict[str, Any]] = []
        try:
            for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix,
                                                                          Delimiter="/"):
                entries.extend({"name": f"{bucket}/{p['Prefix'].rstrip('/')}", "size": 0, "type": "directory"}
                               for p in page.get("CommonPrefixes", []))
                entries.extend(self._object_info(bucket, o["Key"], o) for o in page.get("Contents", [])
                               if o["Key"] != prefix)  # a directory marker object is the directory itself
        except Exception as exc:
            if _missing(exc):
                raise FileNotFoundError(f"{bucket}/{key}") from exc
            raise
        return entries

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        bucket, key = self.split_path(self._strip_protocol(path))
        if not bucket:
            return {"name": "", "size": 0, "type": "directory"}
        if not key:
            return self._bucket_info(bucket)
        try:
            return self._object_info(bucket, key, self.s3.head_object(Bucket=bucket, Key=key))
        except Exception as exc:
            if not _missing(exc):
                raise
        try:
            found = self.s3.list_objects_v2(Bucket=bucket, Prefix=f"{key.rstrip('/')}/", MaxKeys=1)
        except Exception as exc:
            if _missing(exc):
                raise FileNotFoundError(path) from exc
            raise
        if found.get("KeyCount", 0):
            return {"name": f"{bucket}/{key.rstrip('/')}", "size": 0, "type": "directory"}
        raise FileNotFoundError(path)

    def modified(self, path: str) -> dt.datetime:
        modified = self.info(path).get("LastModified")
        if modified is None:
            raise IsADirectoryError(path)
        return modified  # type: ignore[no-any-return]

    def cat_file(self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any) -> bytes:
        bucket, key = self.split_path(self._strip_protocol(path))
        if start is not None or end is not None:
            size = self.size(path) or 0
            start = 0 if start is None else start if start >= 0 else max(size + start, 0)
            end = size if end is None else end if end >= 0 else size + end
            return self._get(bucket, key, start, end)
        return self._get(bucket, key, None, None)

    def _get(self, bucket: str, key: str, start: int | None, end: int | None) -> bytes:
        """The object's bytes ``[start, end)`` (all of it without a range)."""
        extra: dict[str, str] = {}
        if start is not None and end is not None:
            if end <= start:
                return b""
            extra["Range"] = f"bytes={start}-{end - 1}"
        try:
            return self.s3.get_object(Bucket=bucket, Key=key, **extra)["Body"].read()  # type: ignore[no-any-return]
        except Exception as exc:
            if _missing(exc):
                raise FileNotFoundError(f"{bucket}/{key}") from exc
            raise

    def sign(self, path: str, expiration: int = 100, **kwargs: Any) -> str:
        bucket, key = self.split_path(self._strip_protocol(path))
        return self.s3.generate_presigned_url(  # type: ignore[no-any-return]
            "get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=expiration)

    # -- changing the tree -----------------------------------------------------------------------------------
    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        bucket, key = self.split_path(self._strip_protocol(path))
        self.s3.put_object(Bucket=bucket, Key=key, Body=value)

    def cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        src_bucket, src_key = self.split_path(self._strip_protocol(path1))
        bucket, key = self.split_path(self._strip_protocol(path2))
        if self.isdir(path1):
            return  # directories are prefixes: copying their files is enough
        self.s3.copy_object(Bucket=bucket, Key=key, CopySource={"Bucket": src_bucket, "Key": src_key})

    def rm_file(self, path: str) -> None:
        bucket, key = self.split_path(self._strip_protocol(path))
        if key:
            self.s3.delete_object(Bucket=bucket, Key=key)
        else:
            self.rmdir(bucket)

    def _rm(self, path: str) -> None:
        self.rm_file(path)

    def rm(self, path: Any, recursive: bool = False, maxdepth: int | None = None) -> None:
        paths = self.expand_path(path, recursive=recursive, maxdepth=maxdepth)
        for p in reversed(paths):  # files before their directories; a bucket only once emptied
            _, key = self.split_path(p)
            if key and self.isdir(p):
                continue  # a prefix: gone with its last file
            self.rm_file(p)

    def mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        """A bucket is made; a directory inside one needs nothing (S3 has no directories, only prefixes)."""
        bucket, key = self.split_path(self._strip_protocol(path))
        if key and not create_parents:
            self._bucket_info(bucket)
            return
        try:
            self._bucket_info(bucket)
        except FileNotFoundError:
            region = self.s3.meta.region_name
            extra = {} if region in (None, "us-east-1") else {
                "CreateBucketConfiguration": {"LocationConstraint": region}}
            self.s3.create_bucket(Bucket=bucket, **extra)
            return
        if not key:
            raise FileExistsError(bucket)

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        try:
            self.mkdir(path, create_parents=True)
        except FileExistsError:
            if not exist_ok:
                raise

    def rmdir(self, path: str) -> None:
        bucket, key = self.split_path(self._strip_protocol(path))
        if not key:
            self.s3.delete_bucket(Bucket=bucket)

    def _open(self, path: str, mode: str = "rb", block_size: int | None = None, autocommit: bool = True,
              cache_options: dict[str, Any] | None = None, **kwargs: Any) -> S3File:
        if "a" in mode:
            raise ValueError("appending to an S3 object is not supported: read it, then write the whole object")
        return S3File(self, path, mode, block_size=block_size or "default", autocommit=autocommit,
                      cache_options=cache_options, **kwargs)


class S3File(AbstractBufferedFile):
    """One object: ranged ``GetObject`` reads; writes as one ``PutObject``, or a multipart upload when large."""

    fs: S3FileSystem

    def __init__(self, fs: S3FileSystem, path: str, mode: str = "rb", block_size: Any = "default",
                 **kwargs: Any) -> None:
        self.bucket, self.key = fs.split_path(fs._strip_protocol(path))
        self.upload_id: str | None = None
        self.parts: list[dict[str, Any]] = []
        if "w" in mode and block_size != "default" and block_size is not None:
            block_size = max(int(block_size), MIN_PART_SIZE)
        super().__init__(fs, path, mode, block_size=block_size, **kwargs)

    def _fetch_range(self, start: int, end: int) -> bytes:
        return self.fs._get(self.bucket, self.key, start, end)

    def _initiate_upload(self) -> None:
        """Nothing yet: a file that fits one block is written by one PutObject when it closes."""

    def _upload_chunk(self, final: bool = False) -> bool:
        data = self.buffer.getvalue()
        if final and self.upload_id is None:
            self.fs.s3.put_object(Bucket=self.bucket, Key=self.key, Body=data)
            return True
        if self.upload_id is None:
            self.upload_id = self.fs.s3.create_multipart_upload(Bucket=self.bucket, Key=self.key)["UploadId"]
        number = len(self.parts) + 1
        part = self.fs.s3.upload_part(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id,
                                      PartNumber=number, Body=data)
        self.parts.append({"PartNumber": number, "ETag": part["ETag"]})
        if final:
            self.fs.s3.complete_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id,
                                                 MultipartUpload={"Parts": self.parts})
        return True

    def discard(self) -> None:
        if self.upload_id is not None:
            self.fs.s3.abort_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id)
            self.upload_id = None
