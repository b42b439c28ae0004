"""``airflow.operators.dummy``: Airflow 2's deprecated name for EmptyOperator."""

from updraft.operators.empty import EmptyOperator

DummyOperator = EmptyOperator

__all__ = ["DummyOperator", "EmptyOperator"]
