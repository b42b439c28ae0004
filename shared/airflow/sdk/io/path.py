"""``airflow.sdk.io.path``."""

from updraft.sdk.io.path import ObjectStoragePath

__all__ = ["ObjectStoragePath"]
