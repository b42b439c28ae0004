"""``airflow.models.baseoperator`` (Airflow 2 path)."""

from updraft.sdk.baseoperator import (
    BaseOperator,
    chain,
    chain_linear,
    cross_downstream,
)

__all__ = ["BaseOperator", "chain", "chain_linear", "cross_downstream"]
