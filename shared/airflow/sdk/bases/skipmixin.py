"""``airflow.sdk.bases.skipmixin``."""

from updraft.sdk.skipmixin import SkipMixin

__all__ = ["SkipMixin"]
