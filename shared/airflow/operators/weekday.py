"""``airflow.operators.weekday`` (Airflow 2 path)."""

from updraft.operators.weekday import BranchDayOfWeekOperator

__all__ = ["BranchDayOfWeekOperator"]
