"""Airflow's ``airflow.sdk.io`` filesystem registry: ``get_fs``/``has_fs`` by scheme and ``attach`` (ObjectStore).

Airflow maps a scheme to a filesystem through the providers installed (``file``/``local`` built in, ``s3`` from
the Amazon provider, ...). Updraft has ``file``/``local`` (fsspec's local filesystem) and ``s3``/``s3a``
(``updraft.sdk.io.s3``, with the DAG-code role's credentials); any other fsspec filesystem is used through
``attach(protocol, fs=...)``, as in Airflow. The S3 filesystem takes no AWS connection: ``aws_default`` (or none)
means the DAG-code role, and another ``conn_id`` is refused by name, as Updraft's other S3 code refuses it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any, ClassVar

from fsspec import AbstractFileSystem

from updraft.sdk.aws_connections import CONN_HINT, DEFAULT_CONN_IDS
from updraft.sdk.exceptions import UnsupportedFeatureError

Properties = dict[str, str]


def _file(conn_id: str | None, storage_options: Properties) -> AbstractFileSystem:
    from fsspec.implementations.local import LocalFileSystem

    return LocalFileSystem(**storage_options)


def _s3(conn_id: str | None, storage_options: Properties) -> AbstractFileSystem:
    # lazy: optional (fsspec's S3 filesystem only for an s3:// path)
    from updraft.sdk.io.s3 import S3FileSystem

    if conn_id not in DEFAULT_CONN_IDS:
        raise UnsupportedFeatureError(f"an s3 ObjectStoragePath with conn_id={conn_id!r}", CONN_HINT)
    if storage_options:
        raise UnsupportedFeatureError(
            f"s3 storage options {sorted(storage_options)}",
            "the S3 filesystem uses the DAG-code role's credentials and the environment's region as they are")
    return S3FileSystem()


S3_PROTOCOLS = ("s3", "s3a")
SCHEME_TO_FS: dict[str, Callable[[str | None, Properties], AbstractFileSystem]] = {
    "file": _file, "local": _file, **dict.fromkeys(S3_PROTOCOLS, _s3),
}


def get_fs(scheme: str, conn_id: str | None = None,
           storage_options: Properties | None = None) -> AbstractFileSystem:
    """The filesystem for ``scheme`` (Airflow's ``airflow.sdk.io.get_fs``)."""
    try:
        factory = SCHEME_TO_FS[scheme]
    except KeyError:
        raise ValueError(f"No filesystem registered for scheme {scheme}: Updraft has {sorted(SCHEME_TO_FS)}; "
                         "attach(protocol, fs=<an fsspec filesystem>) uses any other") from None
    return factory(conn_id, storage_options or {})


def has_fs(scheme: str) -> bool:
    """Whether ``scheme`` has a filesystem (Airflow's ``airflow.sdk.io.has_fs``)."""
    return scheme in SCHEME_TO_FS


class ObjectStore:
    """A filesystem with the connection it was made for; call ``attach`` to get one."""

    __version__: ClassVar[int] = 1

    def __init__(self, protocol: str, conn_id: str | None, fs: AbstractFileSystem | None = None,
                 storage_options: Properties | None = None) -> None:
        self.conn_id = conn_id
        self.protocol = protocol
        self.storage_options = storage_options
        if fs is not None:
            self.__dict__["fs"] = fs

    def __str__(self) -> str:
        return f"{self.protocol}-{self.conn_id}" if self.conn_id else self.protocol

    @cached_property
    def fs(self) -> AbstractFileSystem:
        return get_fs(self.protocol, self.conn_id, self.storage_options)

    @property
    def fsid(self) -> str:
        try:
            return str(self.fs.fsid)
        except NotImplementedError:
            return f"{self.fs.protocol}-{self.conn_id or 'env'}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ObjectStore):
            return NotImplemented
        return self.conn_id == other.conn_id and self.fs == other.fs

    def __hash__(self) -> int:
        return hash((self.conn_id, self.fsid))


_STORE_CACHE: dict[str, ObjectStore] = {}


def attach(protocol: str | None = None, conn_id: str | None = None, alias: str | None = None,
           encryption_type: str | None = "", fs: AbstractFileSystem | None = None, **kwargs: Any) -> ObjectStore:
    """The store for ``protocol`` and ``conn_id`` (or ``alias``), made once per process (Airflow's ``attach``)."""
    if encryption_type:
        raise UnsupportedFeatureError(f"attach(encryption_type={encryption_type!r})",
                                      "Airflow's attach accepts it but encrypts nothing with it; leave it out")
    if alias and (store := _STORE_CACHE.get(alias)):
        return store
    if not protocol:
        raise ValueError(f"No registered store with alias: {alias}" if alias
                         else "No protocol specified and no alias provided")
    if not alias:
        alias = f"{protocol}-{conn_id}" if conn_id else protocol
        if store := _STORE_CACHE.get(alias):
            return store
    _STORE_CACHE[alias] = store = ObjectStore(protocol=protocol, conn_id=conn_id, fs=fs, **kwargs)
    return store
