"""``airflow.timetables.base``: what custom timetables subclass and return."""

from updraft.timetables.base import (
    AirflowTimetableInvalid,
    DagRunInfo,
    DataInterval,
    TimeRestriction,
    Timetable,
)

__all__ = ["AirflowTimetableInvalid", "DagRunInfo", "DataInterval", "TimeRestriction", "Timetable"]
