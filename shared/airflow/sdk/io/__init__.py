"""``airflow.sdk.io``: object storage paths and their filesystems."""

from updraft.sdk.io import ObjectStoragePath, Properties, attach, get_fs, has_fs

__all__ = ["ObjectStoragePath", "Properties", "attach", "get_fs", "has_fs"]
