"""``airflow.operators.latest_only`` (Airflow 2 path)."""

from updraft.operators.latest_only import LatestOnlyOperator

__all__ = ["LatestOnlyOperator"]
