"""``airflow.stats`` (Airflow 2 path): ``Stats``, which records nothing from DAG code (see updraft.sdk.stats)."""

from updraft.sdk.stats import Stats

__all__ = ["Stats"]
