"""``airflow.sdk.definitions.xcom_arg``."""

from updraft.sdk.xcom_arg import XComArg

__all__ = ["XComArg"]
