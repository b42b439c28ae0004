"""``airflow.models.baseoperatorlink`` (Airflow 2 path)."""

from updraft.sdk.operator_link import BaseOperatorLink

__all__ = ["BaseOperatorLink"]
