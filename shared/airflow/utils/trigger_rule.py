"""``airflow.utils.trigger_rule``."""

from updraft.sdk.trigger_rule import TriggerRule

__all__ = ["TriggerRule"]
