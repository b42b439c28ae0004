"""``airflow.models.skipmixin`` (Airflow 2 path)."""

from updraft.sdk.skipmixin import SkipMixin

__all__ = ["SkipMixin"]
