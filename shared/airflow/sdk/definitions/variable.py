"""``airflow.sdk.definitions.variable``."""

from updraft.sdk.variable import Variable

__all__ = ["Variable"]
