"""``airflow.sdk.bases.operator``."""

from updraft.sdk.baseoperator import (
    BaseOperator,
    chain,
    chain_linear,
    cross_downstream,
)

__all__ = ["BaseOperator", "chain", "chain_linear", "cross_downstream"]
