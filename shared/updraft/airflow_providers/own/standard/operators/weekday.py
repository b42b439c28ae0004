"""``airflow.providers.standard.operators.weekday``."""

from updraft.operators.weekday import BranchDayOfWeekOperator

__all__ = ["BranchDayOfWeekOperator"]
