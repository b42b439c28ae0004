"""``airflow.sdk.definitions.baseoperator`` (Airflow 3.0's path)."""

from updraft.sdk.baseoperator import (
    BaseOperator,
    chain,
    chain_linear,
    cross_downstream,
)

__all__ = ["BaseOperator", "chain", "chain_linear", "cross_downstream"]
