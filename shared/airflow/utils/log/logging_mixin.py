"""``airflow.utils.log.logging_mixin``."""

from updraft.sdk.logging_mixin import LoggingMixin

__all__ = ["LoggingMixin"]
