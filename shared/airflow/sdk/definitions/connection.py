"""``airflow.sdk.definitions.connection``."""

from updraft.sdk.connection import Connection

__all__ = ["Connection"]
