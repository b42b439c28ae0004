"""``airflow.timetables.interval``: data-interval schedules."""

from updraft.timetables.interval import CronDataIntervalTimetable, DeltaDataIntervalTimetable

__all__ = ["CronDataIntervalTimetable", "DeltaDataIntervalTimetable"]
