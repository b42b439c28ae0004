"""``airflow.partition_mappers.base``: re-exports of Updraft's built-in partition classes."""

from updraft.timetables.partitions.mappers import (
    PartitionMapper,
    RollupMapper,
    is_rollup,
)

__all__ = ["PartitionMapper", "RollupMapper", "is_rollup"]
