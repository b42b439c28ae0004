"""Dependency rules, one module each, every one answering with a ``DepStatus`` (Airflow's ``ti_deps``)."""

from updraft.scheduling.decisions.deps.base import DepStatus, failing, passing
from updraft.scheduling.decisions.deps.dagrun_running import dagrun_running_status
from updraft.scheduling.decisions.deps.prev_dagrun import PreviousRun, depends_on_past, prev_dagrun_status
from updraft.scheduling.decisions.deps.retry_period import not_in_retry_period_status, ready_to_reschedule_status
from updraft.scheduling.decisions.deps.trigger_rule import TriggerRuleResult, UpstreamCounts, evaluate_trigger_rule
from updraft.sdk.trigger_rule import TriggerRule

__all__ = [
    "DepStatus",
    "PreviousRun",
    "TriggerRule",
    "TriggerRuleResult",
    "UpstreamCounts",
    "dagrun_running_status",
    "depends_on_past",
    "evaluate_trigger_rule",
    "failing",
    "not_in_retry_period_status",
    "passing",
    "prev_dagrun_status",
    "ready_to_reschedule_status",
]
