"""``airflow.providers.standard.operators.empty``."""

from updraft.operators.empty import EmptyOperator

__all__ = ["EmptyOperator"]
