"""``airflow.timetables.trigger``: cron- and delta-triggered schedules."""

from updraft.timetables.trigger import (
    CronTriggerTimetable,
    DeltaTriggerTimetable,
    MultipleCronTriggerTimetable,
)

__all__ = ["CronTriggerTimetable", "DeltaTriggerTimetable", "MultipleCronTriggerTimetable"]
