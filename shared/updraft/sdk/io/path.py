"""``airflow.sdk.ObjectStoragePath``: a pathlib-like path on object storage, as Airflow 3.3's (``sdk/io/path.py``).

It is universal_pathlib's ``ProxyUPath`` around a UPath, as in Airflow, with the connection id taken from the
URL's user part (``s3://aws_default@bucket/key``) or ``conn_id=``. Every operation, the delegated pathlib ones
(``exists``, ``mkdir``, ``iterdir``, ``glob``, ``read_bytes``, ...) included, runs on the filesystem ``attach``
gives for the path's protocol and connection (``updraft.sdk.io.store``): for ``s3://`` the DAG-code role's,
never Updraft's. Airflow only does that for paths with a ``conn_id``; here a path without one gets the same
default store instead of fsspec's own s3 implementation (s3fs, which Updraft cannot install; see ``io.s3``).

Differences from Airflow: reads and writes are not reported to hook lineage (Updraft has no lineage).
"""

from __future__ import annotations

import shutil
from stat import S_IFDIR, S_IFLNK, S_IFREG
from typing import Any, ClassVar
from urllib.parse import urlsplit

from fsspec import AbstractFileSystem
from fsspec.utils import stringify_path
from upath import UPath
from upath.extensions import ProxyUPath, classmethod_or_method

from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.sdk.io.store import S3_PROTOCOLS, attach


class stat_result(dict):  # Airflow's name
    """``ObjectStoragePath.stat()``: the filesystem's details, with the ``os.stat_result`` attributes it has."""

    st_dev = property(lambda self: 0)
    st_size = property(lambda self: self.get("size", 0))
    st_gid = property(lambda self: self.get("gid", 0))
    st_uid = property(lambda self: self.get("uid", 0))
    st_ino = property(lambda self: self.get("ino", 0))
    st_nlink = property(lambda self: self.get("nlink", 0))

    @property
    def st_mtime(self) -> float:
        if "mtime" in self:
            return float(self["mtime"])
        if "LastModified" in self:
            return float(self["LastModified"].timestamp())
        return 0

    @property
    def st_mode(self) -> int:
        if "mode" in self:
            return int(self["mode"])
        mode = {"file": S_IFREG, "directory": S_IFDIR}.get(self.get("type", ""), 0)
        return S_IFLNK if self.get("isLink", False) else mode


class ObjectStoragePath(ProxyUPath):
    """A path-like object for object storage."""

    __version__: ClassVar[int] = 1

    sep: ClassVar[str] = "/"
    root_marker: ClassVar[str] = "/"

    __slots__ = ("_conn_id", "_hash_cached")
    _conn_id: str | None
    _hash_cached: int

    def __init__(self, *args: Any, protocol: str | None = None, conn_id: str | None = None,
                 **storage_options: Any) -> None:
        storage_options.setdefault("conn_id", None)
        if args:
            arg0 = args[0]
            if isinstance(arg0, type(self)):
                storage_options["conn_id"] = arg0.conn_id
            else:
                parsed_url = urlsplit(stringify_path(arg0))
                userinfo, have_info, hostinfo = parsed_url.netloc.rpartition("@")
                if have_info:
                    storage_options["conn_id"] = userinfo or None
                    parsed_url = parsed_url._replace(netloc=hostinfo)
                args = (parsed_url.geturl(), *args[1:])
                protocol = protocol or parsed_url.scheme
        if conn_id is not None:
            storage_options["conn_id"] = conn_id
        self._conn_id = storage_options.pop("conn_id", None)
        super().__init__(*args, protocol=protocol, **storage_options)
        self._use_store_fs(self.__wrapped__)

    @classmethod_or_method  # type: ignore[arg-type]
    def _from_upath(cls_or_self: Any, upath: UPath, /) -> ObjectStoragePath:  # type: ignore[override]
        """Wrap a UPath, keeping the calling instance's conn_id (called on the class or on a path)."""
        is_instance = isinstance(cls_or_self, ObjectStoragePath)
        cls = type(cls_or_self) if is_instance else cls_or_self
        if isinstance(upath, cls):
            return upath
        obj = object.__new__(cls)
        obj.__wrapped__ = upath
        obj._conn_id = getattr(cls_or_self, "_conn_id", None) if is_instance else None
        if not hasattr(upath, "_fs_cached"):
            obj._use_store_fs(upath)
        return obj

    def _use_store_fs(self, wrapped: UPath) -> None:
        """Give the wrapped UPath the store's filesystem, so delegated operations use its credentials too.

        As in Airflow, a protocol with no registered filesystem keeps fsspec's own, and so does a local path
        with storage options (fsspec's ``LocalFileSystem(auto_mkdir=...)``); an S3 path takes none.
        """
        protocol = wrapped.protocol or "file"
        if wrapped.storage_options:
            if protocol in S3_PROTOCOLS:
                raise UnsupportedFeatureError(
                    f"s3 storage options {sorted(wrapped.storage_options)} on ObjectStoragePath",
                    "the S3 filesystem uses the DAG-code role's credentials and the environment's region")
            return
        try:
            wrapped._fs_cached = attach(protocol, self._conn_id).fs
        except ValueError:
            return  # no filesystem registered for it: fsspec's own, as Airflow

    @property
    def conn_id(self) -> str | None:
        """The connection id of this path."""
        return getattr(self, "_conn_id", None)

    @property
    def fs(self) -> AbstractFileSystem:
        """The filesystem of this path (``attach``'s for its protocol and connection)."""
        return attach(self.protocol or "file", self.conn_id).fs

    def __hash__(self) -> int:
        try:
            return self._hash_cached
        except AttributeError:
            self._hash_cached = hash(str(self))
            return self._hash_cached

    def __eq__(self, other: Any) -> bool:
        return self.samestore(other) and str(self) == str(other)

    def __ne__(self, other: Any) -> bool:  # ProxyUPath's compares only the wrapped paths
        return not self == other

    def samestore(self, other: Any) -> bool:
        return (isinstance(other, ObjectStoragePath) and self.protocol == other.protocol
                and self.conn_id == other.conn_id)

    @property
    def container(self) -> str:
        return self.bucket

    @property
    def bucket(self) -> str:
        return self._url.netloc if self._url else ""

    @property
    def key(self) -> str:
        # per convention without the leading slashes; a trailing slash stays (directory-like)
        return self._url.path.lstrip(self.sep) if self._url else ""

    @property
    def namespace(self) -> str:
        return f"{self.protocol}://{self.bucket}" if self.bucket else self.protocol

    def open(self, mode: str = "r", **kwargs: Any) -> Any:  # type: ignore[override]
        """Open the file at this path (fsspec's ``open``: text or binary by ``mode``)."""
        kwargs.setdefault("block_size", kwargs.pop("buffering", None))
        return self.fs.open(self.path, mode=mode, **kwargs)

    def stat(self) -> stat_result:  # type: ignore[override]
        return stat_result(self.fs.stat(self.path), protocol=self.protocol, conn_id=self.conn_id)

    def samefile(self, other_path: Any) -> bool:
        if not isinstance(other_path, ObjectStoragePath):
            return False
        st, other_st = self.stat(), other_path.stat()
        return all(st[k] == other_st[k] for k in ("protocol", "conn_id")) and st.st_ino == other_st.st_ino

    def replace(self, target: Any) -> ObjectStoragePath:  # type: ignore[override]
        return self.rename(target)  # type: ignore[return-value]

    @classmethod
    def cwd(cls) -> ObjectStoragePath:  # type: ignore[override]
        return cls._from_upath(UPath.cwd())  # type: ignore[no-any-return]

    @classmethod
    def home(cls) -> ObjectStoragePath:  # type: ignore[override]
        return cls._from_upath(UPath.home())  # type: ignore[no-any-return]

    # -- Airflow's extended operations ------------------------------------------------------------------------
    def ukey(self) -> str:
        return str(self.fs.ukey(self.path))

    def checksum(self) -> int:
        return int(self.fs.checksum(self.path))

    def read_block(self, offset: int, length: int, delimiter: bytes | None = None) -> bytes:
        return bytes(self.fs.read_block(self.path, offset=offset, length=length, delimiter=delimiter))

    def sign(self, expiration: int = 100, **kwargs: Any) -> str:
        return str(self.fs.sign(self.path, expiration=expiration, **kwargs))

    def size(self) -> int:
        return int(self.fs.size(self.path))

    def _cp_file(self, dst: ObjectStoragePath, **kwargs: Any) -> None:
        """Copy one file to another store by streaming it (``dst`` a directory: into it, by this key)."""
        if dst.key.endswith(self.sep) or not dst.key:
            dst.mkdir(exist_ok=True, parents=True)
            dst = dst / self.key
        elif dst.is_dir():
            dst = dst / self.key
        with self.open("rb") as f1, dst.open("wb") as f2:
            shutil.copyfileobj(f1, f2, **kwargs)

    def copy(self, dst: str | ObjectStoragePath, recursive: bool = False,  # type: ignore[override]
             **kwargs: Any) -> None:
        """Copy file(s) to ``dst``; across stores a file keeps its key (s3://a/k/f -> s3://b/k/f)."""
        if isinstance(dst, str):
            dst = ObjectStoragePath(dst)
        if self.samestore(dst):
            self.fs.copy(self.path, dst.path, recursive=recursive, **kwargs)
            return
        if self.protocol == "file":
            dst.fs.put(self.path, dst.path, recursive=recursive, **kwargs)
            return
        if dst.protocol == "file":
            self.fs.get(self.path, dst.path, recursive=recursive, **kwargs)
            return
        if not self.exists():
            raise FileNotFoundError(f"{self} does not exist")
        if self.is_dir():
            if dst.is_file():
                raise ValueError("Cannot copy directory to a file.")
            dst.mkdir(exist_ok=True, parents=True)
            for path in self.fs.expand_path(self.path, recursive=True, **kwargs):
                if path == self.path:
                    continue
                src_obj = ObjectStoragePath(path, protocol=self.protocol, conn_id=self.conn_id)
                if not src_obj.is_dir():  # empty directories are not created
                    src_obj._cp_file(dst)
            return
        self._cp_file(dst, **kwargs)

    def copy_into(self, target_dir: str | ObjectStoragePath, recursive: bool = False,  # type: ignore[override]
                  **kwargs: Any) -> None:
        if isinstance(target_dir, str):
            target_dir = ObjectStoragePath(target_dir)
        if not target_dir.is_dir():
            raise NotADirectoryError(f"Destination {target_dir} is not a directory.")
        self.copy(target_dir / self.name, recursive=recursive, **kwargs)

    def move(self, path: str | ObjectStoragePath, recursive: bool = False,  # type: ignore[override]
             **kwargs: Any) -> None:
        if isinstance(path, str):
            path = ObjectStoragePath(path)
        if self.samestore(path):
            self.fs.move(self.path, path.path, recursive=recursive, **kwargs)
            return
        self.copy(path, recursive=recursive, **kwargs)
        self.unlink()

    def move_into(self, target_dir: str | ObjectStoragePath, recursive: bool = False,  # type: ignore[override]
                  **kwargs: Any) -> None:
        if isinstance(target_dir, str):
            target_dir = ObjectStoragePath(target_dir)
        if not target_dir.is_dir():
            raise NotADirectoryError(f"Destination {target_dir} is not a directory.")
        self.move(target_dir / self.name, recursive=recursive, **kwargs)

    # -- XCom serde, as Airflow's ------------------------------------------------------------------------------
    def serialize(self) -> dict[str, Any]:
        return {"path": str(self), "conn_id": self.conn_id, "kwargs": {**self.storage_options}}

    @classmethod
    def deserialize(cls, data: dict[str, Any], version: int) -> ObjectStoragePath:
        if version > cls.__version__:
            raise ValueError(f"Cannot deserialize version {version} with version {cls.__version__}.")
        return ObjectStoragePath(data["path"], conn_id=data.get("conn_id"), **data.get("kwargs", {}))

    def __str__(self) -> str:
        if self.protocol and self.conn_id:
            return f"{self.protocol}://{self.conn_id}@{self.path}"
        return str(super().__str__())
