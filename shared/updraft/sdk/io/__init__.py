"""``airflow.sdk.io``: object storage paths (``ObjectStoragePath``) and the filesystems behind them."""

from updraft.sdk.io.path import ObjectStoragePath
from updraft.sdk.io.store import Properties, attach, get_fs, has_fs

__all__ = ["ObjectStoragePath", "Properties", "attach", "get_fs", "has_fs"]
