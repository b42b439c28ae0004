"""``airflow.task.weight_rule``."""

from updraft.sdk.trigger_rule import WeightRule

__all__ = ["WeightRule"]
