"""``airflow.operators.empty`` (Airflow 2 path)."""

from updraft.operators.empty import EmptyOperator

__all__ = ["EmptyOperator"]
