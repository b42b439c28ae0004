"""``airflow.utils.helpers``: Airflow's small helpers, and the Airflow 2 path of ``chain``/``cross_downstream``."""

from updraft.sdk.baseoperator import (
    chain,
    chain_linear,
    cross_downstream,
)
from updraft.sdk.helpers import (
    as_flattened_list,
    at_most_one,
    chunks,
    convert_camel_to_snake,
    exactly_one,
    is_container,
    merge_dicts,
    partition,
    prune_dict,
    validate_key,
)

__all__ = ["as_flattened_list", "at_most_one", "chain", "chain_linear", "chunks", "convert_camel_to_snake",
           "cross_downstream", "exactly_one", "is_container", "merge_dicts", "partition", "prune_dict",
           "validate_key"]
