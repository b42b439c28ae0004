"""``airflow.models.variable`` (Airflow 2 path)."""

from updraft.sdk.variable import Variable

__all__ = ["Variable"]
