"""``airflow.sdk.bases.operatorlink``."""

from updraft.sdk.operator_link import BaseOperatorLink

__all__ = ["BaseOperatorLink"]
