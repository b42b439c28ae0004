"""``airflow.datasets.metadata`` (Airflow 2)."""

from updraft.sdk.assets import Metadata

__all__ = ["Metadata"]
