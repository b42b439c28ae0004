"""``airflow.partition_mappers.identity``: re-exports of Updraft's built-in partition classes."""

from updraft.timetables.partitions.mappers import (
    IdentityMapper,
)

__all__ = ["IdentityMapper"]
