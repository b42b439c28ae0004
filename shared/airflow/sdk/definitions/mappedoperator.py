"""``airflow.sdk.definitions.mappedoperator``."""

from updraft.sdk.mappedoperator import MappedOperator

__all__ = ["MappedOperator"]
