"""``airflow.models.dag`` (Airflow 2 path)."""

from updraft.sdk.dag import DAG
from updraft.sdk.decorators import dag

__all__ = ["DAG", "dag"]
