"""Timetables: when DAGs run and which data interval each run covers, with Airflow 3's exact semantics.

One schedule family per module (``simple``, ``interval``, ``trigger``, ``events``); ``schedule`` maps a
DAG's ``schedule=`` argument to a timetable, ``registry`` is the serialized-DAG JSON contract, and
``planning`` previews upcoming runs. ``airflow.timetables.*`` re-exports these for DAG files.
"""

from updraft.timetables._time import frozen_now, utcnow
from updraft.timetables.base import (
    AirflowTimetableInvalid,
    DagRunInfo,
    DagRunType,
    DataInterval,
    TimeRestriction,
    Timetable,
)
from updraft.timetables.events import EventsTimetable
from updraft.timetables.interval import CronDataIntervalTimetable, DeltaDataIntervalTimetable
from updraft.timetables.planning import next_dagruns
from updraft.timetables.registry import TimetableNotRegistered, decode_timetable, encode_timetable
from updraft.timetables.schedule import InvalidSchedule, create_timetable
from updraft.timetables.simple import (
    AssetTriggeredTimetable,
    ContinuousTimetable,
    NullTimetable,
    OnceTimetable,
)
from updraft.timetables.trigger import (
    CronTriggerTimetable,
    DeltaTriggerTimetable,
    MultipleCronTriggerTimetable,
)

__all__ = [
    "AirflowTimetableInvalid",
    "AssetTriggeredTimetable",
    "ContinuousTimetable",
    "CronDataIntervalTimetable",
    "CronTriggerTimetable",
    "DagRunInfo",
    "DagRunType",
    "DataInterval",
    "DeltaDataIntervalTimetable",
    "DeltaTriggerTimetable",
    "EventsTimetable",
    "InvalidSchedule",
    "MultipleCronTriggerTimetable",
    "NullTimetable",
    "OnceTimetable",
    "TimeRestriction",
    "Timetable",
    "TimetableNotRegistered",
    "create_timetable",
    "decode_timetable",
    "encode_timetable",
    "frozen_now",
    "next_dagruns",
    "utcnow",
]
