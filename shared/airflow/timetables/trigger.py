"""``airflow.timetables.trigger``: cron- and delta-triggered schedules."""

from updraft.timetables.partitioned import CronPartitionTimetable
from updraft.timetables.trigger import (
    CronTriggerTimetable,
    DeltaTriggerTimetable,
    MultipleCronTriggerTimetable,
)

__all__ = ["CronPartitionTimetable", "CronTriggerTimetable", "DeltaTriggerTimetable", "MultipleCronTriggerTimetable"]
