"""``airflow.partition_mappers.fixed_key``: re-exports of Updraft's built-in partition classes."""

from updraft.timetables.partitions.mappers import (
    FixedKeyMapper,
)

__all__ = ["FixedKeyMapper"]
