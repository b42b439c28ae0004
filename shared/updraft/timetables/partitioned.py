"""Partitioned schedules (Airflow 3.3): runs for a partition key rather than a logical date.

* :class:`CronPartitionTimetable` fires like ``CronTriggerTimetable``; each run gets the partition whose date is
  the fire time (shifted ``run_offset`` cron steps), keyed ``key_format`` in the timetable's timezone, and, as in
  Airflow, no logical date or data interval.
* :class:`PartitionedAssetTimetable` runs once per downstream partition key its assets' partitioned events map to
  (``default_partition_mapper``, or the asset's entry in ``partition_mapper_config``); the scheduler's side is
  :mod:`updraft.scheduling.asset_partitions`.
* :class:`PartitionedAtRuntime` never schedules: tasks name their keys with ``add_partitions``, and a triggered
  run may be given one (``partition_key`` in ``POST .../dagRuns``).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping
from typing import Any

from pendulum import DateTime

from updraft.timetables._time import coerce_datetime, decode_timezone
from updraft.timetables.base import Timetable
from updraft.timetables.partitions.codec import decode_partition_mapper, encode_partition_mapper
from updraft.timetables.partitions.mappers import IdentityMapper, PartitionMapper
from updraft.timetables.simple import AssetTriggeredTimetable, NullTimetable, encode_asset_condition
from updraft.timetables.trigger import CronTriggerTimetable, decode_run_immediately, encode_run_immediately

__all__ = ["CronPartitionTimetable", "PartitionedAssetTimetable", "PartitionedAtRuntime"]


class CronPartitionTimetable(CronTriggerTimetable):
    """Fire at each cron time; the run is for the partition dated ``run_offset`` fire times away."""

    partitioned = True

    def __init__(self, cron: str, *, timezone: Any, run_offset: int | None = None,
                 run_immediately: bool | datetime.timedelta = False, key_format: str = r"%Y-%m-%dT%H:%M:%S") -> None:
        if not isinstance(run_offset, int | None) or isinstance(run_offset, bool):
            raise ValueError("Run offset other than integer not supported yet.")
        super().__init__(cron, timezone, run_immediately=run_immediately)
        self._run_offset = run_offset or 0
        self._key_format = key_format

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self._expression!r}, timezone={self.serialize()['timezone']!r}, "
                f"run_offset={self._run_offset!r}, key_format={self._key_format!r})")

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        return cls(data["expression"], timezone=decode_timezone(data["timezone"]), run_offset=data.get("run_offset"),
                   run_immediately=decode_run_immediately(data.get("run_immediately", False)) or False,
                   key_format=data["key_format"])

    def serialize(self) -> dict[str, Any]:
        return {**self._cron_fields(), "run_immediately": encode_run_immediately(self._run_immediately),
                "run_offset": self._run_offset, "key_format": self._key_format}

    def partition_of(self, run_after: datetime.datetime) -> tuple[DateTime, str]:
        """The partition date and key of the run firing at ``run_after``."""
        when = coerce_datetime(run_after)
        step = self._get_next if self._run_offset > 0 else self._get_prev
        for _ in range(abs(self._run_offset)):
            when = coerce_datetime(step(when))
        return when, when.in_timezone(self._timezone).strftime(self._key_format)

    def generate_run_id(self, *, run_type: Any, run_after: DateTime | None = None, data_interval: Any = None,
                        **extra: Any) -> str:
        """``scheduled__<run_after>__<partition key>``: Airflow's shape without its random suffix, so racing
        schedulers name the same run and only one creates it."""
        base = super().generate_run_id(run_type=run_type, run_after=run_after, data_interval=data_interval, **extra)
        key = extra.get("partition_key")
        return f"{base}__{key}" if key else base


def _leaves(condition: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    if condition.get("__type") in ("asset_all", "asset_any"):
        for part in condition["objects"]:
            yield from _leaves(part)
    else:
        yield condition


class PartitionedAssetTimetable(AssetTriggeredTimetable):
    """Asset-triggered, one run per downstream partition key the assets' partitioned events map to."""

    partitioned = True
    description: str = "Triggered by partitioned assets"

    def __init__(self, *, assets: Any, partition_mapper_config: Mapping[Any, PartitionMapper] | None = None,
                 default_partition_mapper: PartitionMapper | None = None) -> None:
        super().__init__(assets)
        self.default_partition_mapper = default_partition_mapper or IdentityMapper()
        self.partition_mapper_config: list[tuple[dict[str, Any], PartitionMapper]] = []
        self._by_name: dict[str, PartitionMapper] = {}
        self._by_uri: dict[str, PartitionMapper] = {}
        for asset, mapper in (partition_mapper_config or {}).items():
            self._add(encode_asset_condition(asset), mapper)

    def _add(self, asset: dict[str, Any], mapper: PartitionMapper) -> None:
        self.partition_mapper_config.append((asset, mapper))
        for leaf in _leaves(asset):
            if leaf.get("__type") == "asset_alias":
                raise TypeError("partition_mapper_config keys must be assets or asset references, not aliases: "
                                "partitioned asset aliases are not supported (as in Airflow)")
            if leaf.get("name"):
                self._by_name[leaf["name"]] = mapper
            if leaf.get("uri") and (leaf.get("__type") == "asset" or not leaf.get("name")):
                self._by_uri[leaf["uri"]] = mapper

    @property
    def summary(self) -> str:
        return "Partitioned Asset"

    def get_partition_mapper(self, *, name: str = "", uri: str = "") -> PartitionMapper:
        """The asset's mapper: its ``partition_mapper_config`` entry (by name, then URI), else the default."""
        if name and name in self._by_name:
            return self._by_name[name]
        if uri and uri in self._by_uri:
            return self._by_uri[uri]
        return self.default_partition_mapper

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.serialize()!r})"

    def __hash__(self) -> int:
        return hash((type(self), repr(self.serialize())))

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        timetable = cls(assets=data["asset_condition"],
                        default_partition_mapper=decode_partition_mapper(data["default_partition_mapper"]))
        # The config's keys are encoded asset conditions here (unhashable dicts): added pair by pair.
        for asset, mapper in data.get("partition_mapper_config", []):
            timetable._add(asset, decode_partition_mapper(mapper))
        return timetable

    def serialize(self) -> dict[str, Any]:
        return {"asset_condition": self.asset_condition,
                "default_partition_mapper": encode_partition_mapper(self.default_partition_mapper),
                "partition_mapper_config": [[asset, encode_partition_mapper(mapper)]
                                            for asset, mapper in self.partition_mapper_config]}


class PartitionedAtRuntime(NullTimetable):
    """Never scheduled; partition keys come from the tasks (``add_partitions``) or the trigger request."""

    partitioned_at_runtime = True
    description: str = "Never, external triggers only; partitions set at runtime"

