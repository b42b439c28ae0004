"""Timetables: when DAGs run and which data interval each run covers, with Airflow 3's exact semantics.

One schedule family per module (``simple``, ``interval``, ``trigger``, ``events``); ``schedule`` maps a
DAG's ``schedule=`` argument to a timetable, ``registry`` is the serialized-DAG JSON contract, and
``planning`` previews upcoming runs. ``airflow.timetables.*`` re-exports these for DAG files.

Names resolve lazily so that ``import airflow.timetables.base`` in a DAG file does not pay for croniter and
every schedule family.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from updraft.sdk._internal.unsupported import module_dir, module_getattr

_LAZY = {
    "frozen_now": "updraft.timetables._time",
    "utcnow": "updraft.timetables._time",
    "AirflowTimetableInvalid": "updraft.timetables.base",
    "DagRunInfo": "updraft.timetables.base",
    "DagRunType": "updraft.timetables.base",
    "DataInterval": "updraft.timetables.base",
    "TimeRestriction": "updraft.timetables.base",
    "Timetable": "updraft.timetables.base",
    "EventsTimetable": "updraft.timetables.events",
    "CronDataIntervalTimetable": "updraft.timetables.interval",
    "DeltaDataIntervalTimetable": "updraft.timetables.interval",
    "next_dagruns": "updraft.timetables.planning",
    "TimetableNotRegistered": "updraft.timetables.registry",
    "decode_timetable": "updraft.timetables.registry",
    "encode_timetable": "updraft.timetables.registry",
    "InvalidSchedule": "updraft.timetables.schedule",
    "create_timetable": "updraft.timetables.schedule",
    "AssetTriggeredTimetable": "updraft.timetables.simple",
    "ContinuousTimetable": "updraft.timetables.simple",
    "NullTimetable": "updraft.timetables.simple",
    "OnceTimetable": "updraft.timetables.simple",
    "CronTriggerTimetable": "updraft.timetables.trigger",
    "DeltaTriggerTimetable": "updraft.timetables.trigger",
    "MultipleCronTriggerTimetable": "updraft.timetables.trigger",
}

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

if TYPE_CHECKING:
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

__getattr__ = module_getattr(__name__, globals(), _LAZY)
__dir__ = module_dir(globals(), _LAZY)
