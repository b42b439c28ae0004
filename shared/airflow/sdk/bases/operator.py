"""``airflow.sdk.bases.operator``."""

from updraft.sdk.async_operator import BaseAsyncOperator
from updraft.sdk.baseoperator import (
    BaseOperator,
    chain,
    chain_linear,
    cross_downstream,
)

__all__ = ["BaseAsyncOperator", "BaseOperator", "chain", "chain_linear", "cross_downstream"]
