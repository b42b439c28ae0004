"""``airflow.models.xcom_arg`` (Airflow 2 path)."""

from updraft.sdk.xcom_arg import XComArg

__all__ = ["XComArg"]
