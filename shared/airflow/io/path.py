"""``airflow.io.path``: deprecated in Airflow 3 for ``airflow.sdk.ObjectStoragePath``."""

from updraft.sdk.io.path import ObjectStoragePath

__all__ = ["ObjectStoragePath"]
