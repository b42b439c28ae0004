"""Trigger rules and weight rules with Airflow 3's names and values."""

from __future__ import annotations

from enum import StrEnum


class TriggerRule(StrEnum):
    """When a task may run, given the states of its direct upstream tasks."""

    ALL_SUCCESS = "all_success"
    ALL_FAILED = "all_failed"
    ALL_DONE = "all_done"
    ALL_DONE_MIN_ONE_SUCCESS = "all_done_min_one_success"
    ALL_DONE_SETUP_SUCCESS = "all_done_setup_success"
    ONE_SUCCESS = "one_success"
    ONE_FAILED = "one_failed"
    ONE_DONE = "one_done"
    NONE_FAILED = "none_failed"
    NONE_SKIPPED = "none_skipped"
    ALWAYS = "always"
    NONE_FAILED_MIN_ONE_SUCCESS = "none_failed_min_one_success"
    ALL_SKIPPED = "all_skipped"

    @classmethod
    def is_valid(cls, trigger_rule: str) -> bool:
        return trigger_rule in cls._value2member_map_

    @classmethod
    def all_triggers(cls) -> set[str]:
        return {rule.value for rule in cls}


class WeightRule(StrEnum):
    """How a task's effective priority is computed from its own weight and its relatives'."""

    DOWNSTREAM = "downstream"
    UPSTREAM = "upstream"
    ABSOLUTE = "absolute"

    @classmethod
    def is_valid(cls, weight_rule: str) -> bool:
        return weight_rule in cls._value2member_map_

    @classmethod
    def all_weight_rules(cls) -> set[str]:
        return {rule.value for rule in cls}
