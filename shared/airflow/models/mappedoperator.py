"""``airflow.models.mappedoperator`` (Airflow 2 path)."""

from updraft.sdk.mappedoperator import MappedOperator

__all__ = ["MappedOperator"]
