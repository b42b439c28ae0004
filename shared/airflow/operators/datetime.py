"""``airflow.operators.datetime`` (Airflow 2 path)."""

from updraft.operators.datetime import BranchDateTimeOperator

__all__ = ["BranchDateTimeOperator"]
