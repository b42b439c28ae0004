"""``airflow.sdk.definitions.dag``."""

from updraft.sdk.dag import DAG
from updraft.sdk.decorators import dag

__all__ = ["DAG", "dag"]
