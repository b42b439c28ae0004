"""``airflow.utils.types``: ``DagRunType`` (a custom timetable's ``generate_run_id`` compares ``run_type`` with it,
as in the timetable how-to) and the ``NOTSET`` sentinel."""

from updraft.sdk.notset import NOTSET, ArgNotSet
from updraft.timetables.base import DagRunType

__all__ = ["NOTSET", "ArgNotSet", "DagRunType"]
