"""``airflow.timetables.events``: schedules given as explicit instants."""

from updraft.timetables.events import EventsTimetable

__all__ = ["EventsTimetable"]
