"""``airflow.partition_mappers.allowed_key``: re-exports of Updraft's built-in partition classes."""

from updraft.timetables.partitions.mappers import (
    AllowedKeyMapper,
)

__all__ = ["AllowedKeyMapper"]
