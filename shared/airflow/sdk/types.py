"""``airflow.sdk.types``: ``TaskInstanceKey``."""

from updraft.sdk.ti_key import TaskInstanceKey

__all__ = ["TaskInstanceKey"]
