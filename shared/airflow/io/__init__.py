"""``airflow.io``: Airflow 3's deprecated home of ``airflow.sdk.io``, still importable there."""

from updraft.sdk.io import Properties, attach, get_fs, has_fs

__all__ = ["Properties", "attach", "get_fs", "has_fs"]
