"""``airflow.partition_mappers.product``: re-exports of Updraft's built-in partition classes."""

from updraft.timetables.partitions.mappers import (
    ProductMapper,
)

__all__ = ["ProductMapper"]
