"""``airflow.partition_mappers.chain``: re-exports of Updraft's built-in partition classes."""

from updraft.timetables.partitions.mappers import (
    ChainMapper,
)

__all__ = ["ChainMapper"]
