"""``airflow.sdk.definitions._internal.logging_mixin``."""

from updraft.sdk.logging_mixin import LoggingMixin

__all__ = ["LoggingMixin"]
