"""``airflow.task.priority_strategy``: custom priority weight strategies (see ``updraft.sdk.priority_strategy``)."""

from updraft.sdk.priority_strategy import (
    PriorityWeightStrategy,
    _AbsolutePriorityWeightStrategy,
    _DownstreamPriorityWeightStrategy,
    _UpstreamPriorityWeightStrategy,
    get_weight_rule_from_priority_weight_strategy,
    validate_and_load_priority_weight_strategy,
)

__all__ = [
    "PriorityWeightStrategy",
    "_AbsolutePriorityWeightStrategy",
    "_DownstreamPriorityWeightStrategy",
    "_UpstreamPriorityWeightStrategy",
    "get_weight_rule_from_priority_weight_strategy",
    "validate_and_load_priority_weight_strategy",
]
