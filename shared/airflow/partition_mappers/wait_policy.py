"""``airflow.partition_mappers.wait_policy``: re-exports of Updraft's built-in partition classes."""

from updraft.timetables.partitions.wait_policies import (
    MinimumCount,
    PartitionSatisfaction,
    WaitForAll,
    WaitPolicy,
)

__all__ = ["MinimumCount", "PartitionSatisfaction", "WaitForAll", "WaitPolicy"]
