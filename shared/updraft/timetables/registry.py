"""The JSON contract for timetables inside serialized DAGs: ``{"__type": <class path>, "__var": <data>}``.

Built-in classes are named by their Airflow import paths (``airflow.timetables.trigger.CronTriggerTimetable``)
so serialized DAGs read like Airflow's and survive moving our modules around. Any other class is user
code: the scheduler must never import it by name from stored data, so it is resolved only through the
plugin registry, and a class no plugin registered is refused on both encode and decode, as in Airflow.
"""

from __future__ import annotations

from typing import Any

from updraft.timetables.assets import AssetOrTimeSchedule
from updraft.timetables.base import Timetable
from updraft.timetables.evaluated import EvaluatedTimetable
from updraft.timetables.events import EventsTimetable
from updraft.timetables.interval import CronDataIntervalTimetable, DeltaDataIntervalTimetable
from updraft.timetables.partitioned import CronPartitionTimetable, PartitionedAssetTimetable, PartitionedAtRuntime
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
    "BUILTIN_TIMETABLES",
    "TimetableNotRegistered",
    "decode_timetable",
    "encode_timetable",
    "is_builtin_timetable",
    "timetable_import_path",
]

TYPE_KEY = "__type"
VAR_KEY = "__var"

BUILTIN_TIMETABLES: dict[str, type[Timetable]] = {
    "airflow.timetables.assets.AssetOrTimeSchedule": AssetOrTimeSchedule,
    "airflow.timetables.simple.AssetTriggeredTimetable": AssetTriggeredTimetable,
    "airflow.timetables.simple.ContinuousTimetable": ContinuousTimetable,
    "airflow.timetables.interval.CronDataIntervalTimetable": CronDataIntervalTimetable,
    "airflow.timetables.trigger.CronTriggerTimetable": CronTriggerTimetable,
    "airflow.timetables.interval.DeltaDataIntervalTimetable": DeltaDataIntervalTimetable,
    "airflow.timetables.trigger.DeltaTriggerTimetable": DeltaTriggerTimetable,
    "airflow.timetables.events.EventsTimetable": EventsTimetable,
    "airflow.timetables.trigger.MultipleCronTriggerTimetable": MultipleCronTriggerTimetable,
    "airflow.timetables.simple.NullTimetable": NullTimetable,
    "airflow.timetables.simple.OnceTimetable": OnceTimetable,
    "airflow.timetables.trigger.CronPartitionTimetable": CronPartitionTimetable,
    "airflow.timetables.simple.PartitionedAssetTimetable": PartitionedAssetTimetable,
    "airflow.timetables.simple.PartitionedAtRuntime": PartitionedAtRuntime,
}
"""Canonical (Airflow core) import path -> class."""

_CANONICAL_PATH: dict[type[Timetable], str] = {cls: path for path, cls in BUILTIN_TIMETABLES.items()}


def _aliases() -> dict[str, type[Timetable]]:
    # Other spellings of the same built-ins that may appear in stored data: the task SDK's definition
    # classes (Airflow 3.1+ names) and our own module paths.
    aliases: dict[str, type[Timetable]] = {}
    for path, cls in BUILTIN_TIMETABLES.items():
        module = path.rsplit(".", 2)[-2]
        if cls in (AssetTriggeredTimetable, AssetOrTimeSchedule, PartitionedAssetTimetable, PartitionedAtRuntime):
            module = "assets"
        aliases[f"airflow.sdk.definitions.timetables.{module}.{cls.__name__}"] = cls
        aliases[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return aliases


_DECODABLE: dict[str, type[Timetable]] = {**_aliases(), **BUILTIN_TIMETABLES}


class TimetableNotRegistered(ValueError):
    """A serialized DAG names a timetable class that no loaded plugin registered."""

    def __init__(self, type_string: str) -> None:
        super().__init__(type_string)
        self.type_string = type_string

    def __str__(self) -> str:
        return (
            f"Timetable class {self.type_string!r} is not registered or "
            "you have a top level database access that disrupted the session. "
            "Please check the airflow best practices documentation."
        )


def timetable_import_path(cls: type) -> str:
    """The name a class is serialized under: Airflow's path for built-ins, ``module.QualName`` otherwise."""
    canonical = _CANONICAL_PATH.get(cls)
    if canonical is not None:
        return canonical
    return f"{cls.__module__}.{cls.__qualname__}"


def is_builtin_timetable(cls: type) -> bool:
    """Exact built-in classes only: a user subclass of one is user code and needs registering."""
    return cls in _CANONICAL_PATH


def _registered_custom_timetable(path: str) -> type[Timetable]:
    # lazy: cold start (plugins load only for a timetable not built in)
    from updraft.plugins import registered_timetables

    try:
        return registered_timetables()[path]
    except KeyError:
        raise TimetableNotRegistered(path) from None


def encode_timetable(tt: Timetable) -> dict[str, Any]:
    """Serialize *tt*; a custom class must be registered by a plugin, or the DAG could never be scheduled. A
    custom timetable this process did not load (:class:`EvaluatedTimetable`) encodes back to what it was read as."""
    if isinstance(tt, EvaluatedTimetable):
        return {TYPE_KEY: tt.timetable, VAR_KEY: tt.data}
    path = timetable_import_path(type(tt))
    if not is_builtin_timetable(type(tt)):
        _registered_custom_timetable(path)
    return {TYPE_KEY: path, VAR_KEY: tt.serialize()}


def decode_timetable(data: dict[str, Any], *, unloaded_ok: bool = False) -> Timetable:
    """Rebuild a timetable from :func:`encode_timetable` output without importing anything by name.

    A custom class no plugin registered in this process raises :class:`TimetableNotRegistered`, as in Airflow,
    unless ``unloaded_ok``: a serialized DAG read where user code never runs (scheduler, API) then holds an
    :class:`EvaluatedTimetable` answering from the parser's evaluation."""
    try:
        path = data[TYPE_KEY]
        var = data.get(VAR_KEY, {})
    except (KeyError, TypeError):
        raise ValueError(f"not a serialized timetable: {data!r}") from None
    cls = _DECODABLE.get(path)
    if cls is None:
        try:
            cls = _registered_custom_timetable(path)
        except TimetableNotRegistered:
            if not unloaded_ok:
                raise
            return EvaluatedTimetable(path, var)
    return cls.deserialize(var)
