"""``airflow.providers.standard.operators.latest_only``."""

from updraft.operators.latest_only import LatestOnlyOperator

__all__ = ["LatestOnlyOperator"]
