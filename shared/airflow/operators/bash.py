"""``airflow.operators.bash`` (Airflow 2 path)."""

from updraft.operators.bash import BashOperator

__all__ = ["BashOperator"]
