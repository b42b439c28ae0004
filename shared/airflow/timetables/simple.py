"""``airflow.timetables.simple``: ``None``, ``@once``, ``@continuous`` and asset-triggered schedules."""

from updraft.timetables.partitioned import PartitionedAssetTimetable, PartitionedAtRuntime
from updraft.timetables.simple import (
    AssetTriggeredTimetable,
    ContinuousTimetable,
    NullTimetable,
    OnceTimetable,
)

__all__ = ["AssetTriggeredTimetable", "ContinuousTimetable", "NullTimetable", "OnceTimetable",
           "PartitionedAssetTimetable", "PartitionedAtRuntime"]
