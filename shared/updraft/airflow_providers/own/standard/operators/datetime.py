"""``airflow.providers.standard.operators.datetime``."""

from updraft.operators.datetime import BranchDateTimeOperator, target_times_as_dates

__all__ = ["BranchDateTimeOperator", "target_times_as_dates"]
