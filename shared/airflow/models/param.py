"""``airflow.models.param`` (Airflow 2 path)."""

from updraft.sdk.param import Param, ParamsDict

__all__ = ["Param", "ParamsDict"]
