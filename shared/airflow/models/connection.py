"""``airflow.models.connection`` (Airflow 2 path)."""

from updraft.sdk.connection import Connection

__all__ = ["Connection"]
