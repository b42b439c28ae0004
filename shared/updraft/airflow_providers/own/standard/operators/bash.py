"""``airflow.providers.standard.operators.bash``."""

from updraft.operators.bash import BashOperator

__all__ = ["BashOperator"]
