"""``airflow.utils.helpers`` (Airflow 2 path of ``chain``/``cross_downstream``)."""

from updraft.sdk.baseoperator import (
    chain,
    chain_linear,
    cross_downstream,
)

__all__ = ["chain", "chain_linear", "cross_downstream"]
