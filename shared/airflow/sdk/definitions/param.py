"""``airflow.sdk.definitions.param``."""

from updraft.sdk.param import Param, ParamsDict

__all__ = ["Param", "ParamsDict"]
