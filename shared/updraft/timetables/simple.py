"""Schedules without period arithmetic: ``None``, ``"@once"``, ``"@continuous"`` and asset triggers."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from updraft.timetables._time import utcnow
from updraft.timetables.base import DagRunInfo, DataInterval, SerializedEquality, Timetable

if TYPE_CHECKING:
    from pendulum import DateTime

    from updraft.timetables.base import TimeRestriction

__all__ = [
    "AssetTriggeredTimetable",
    "ContinuousTimetable",
    "NullTimetable",
    "OnceTimetable",
    "encode_asset_condition",
    "is_asset_like",
]


class _TrivialTimetable(SerializedEquality, Timetable):
    """Schedules without period arithmetic: no runs from the clock unless a subclass overrides
    :meth:`next_dagrun_info`, and a manual run covers just its trigger instant."""

    periodic = False
    run_ordering: Sequence[str] = ("logical_date",)

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        return cls()

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def serialize(self) -> dict[str, Any]:
        return {}

    def infer_manual_data_interval(self, *, run_after: DateTime) -> DataInterval:
        return DataInterval.exact(run_after)

    def next_dagrun_info(
        self,
        *,
        last_automated_data_interval: DataInterval | None,
        restriction: TimeRestriction,
    ) -> DagRunInfo | None:
        # ``None`` and asset schedules only run when something outside (a trigger, an asset event) asks.
        return None


class NullTimetable(_TrivialTimetable):
    """``schedule=None``: runs only when triggered from outside."""

    can_be_scheduled = False
    description: str = "Never, external triggers only"

    @property
    def summary(self) -> str:
        return "None"


class OnceTimetable(_TrivialTimetable):
    """``schedule="@once"``: one run at the start date, whatever ``catchup`` says (Airflow since 1.10); with no
    start date on the DAG or its tasks the DAG is ready at once, so the run is "now" (Airflow 3)."""

    description: str = "Once, as soon as possible"

    @property
    def summary(self) -> str:
        return "@once"

    def next_dagrun_info(
        self,
        *,
        last_automated_data_interval: DataInterval | None,
        restriction: TimeRestriction,
    ) -> DagRunInfo | None:
        if last_automated_data_interval is not None:
            return None
        run_after = restriction.earliest or utcnow()
        if restriction.latest is not None and run_after > restriction.latest:
            return None
        return DagRunInfo.exact(run_after)


class ContinuousTimetable(_TrivialTimetable):
    """``schedule="@continuous"``: a new run as soon as the previous one ends, one at a time.

    Each run's interval spans from the previous run's end to "now", so consecutive runs tile time.
    """

    description: str = "As frequently as possible, but only one run at a time."
    active_runs_limit = 1

    @property
    def summary(self) -> str:
        return "@continuous"

    def next_dagrun_info(
        self,
        *,
        last_automated_data_interval: DataInterval | None,
        restriction: TimeRestriction,
    ) -> DagRunInfo | None:
        if restriction.earliest is None:
            return None
        current_time = utcnow()
        if last_automated_data_interval is not None:
            if last_automated_data_interval.end > current_time:
                # The start date moved into the future: keep the old run's length from there.
                start = restriction.earliest
                elapsed = last_automated_data_interval.end - last_automated_data_interval.start
                end = start + datetime.timedelta(seconds=elapsed.total_seconds())
            else:
                start = last_automated_data_interval.end
                end = current_time
        else:
            start = restriction.earliest
            end = max(restriction.earliest, current_time)
        if restriction.latest is not None and end > restriction.latest:
            return None
        return DagRunInfo.interval(start, end)


# Airflow's DagAttributeTypes values for serialized asset conditions.
_ASSET = "asset"
_ASSET_ALIAS = "asset_alias"
_ASSET_ALL = "asset_all"
_ASSET_ANY = "asset_any"
_ASSET_REF = "asset_ref"


def is_asset_like(obj: Any) -> bool:
    """Whether *obj* can stand in a ``schedule=`` asset list (an asset, alias, reference or condition)."""
    if isinstance(obj, dict):
        return "__type" in obj
    if isinstance(obj, str | bytes):
        return False
    return hasattr(obj, "uri") or hasattr(obj, "name") or _condition_kind(obj) is not None


def _condition_kind(obj: Any) -> str | None:
    objects = getattr(obj, "objects", None)
    if objects is None or isinstance(objects, str | bytes):
        return None
    name = type(obj).__name__
    if name.endswith("Any"):
        return _ASSET_ANY
    if name.endswith("All"):
        return _ASSET_ALL
    return None


def encode_asset_condition(obj: Any) -> dict[str, Any]:
    """Airflow's JSON shape for an asset condition, built by duck typing.

    The asset classes live with the authoring SDK; recognizing them by shape keeps this package free of
    that dependency. Already-encoded dicts pass through, so decoding is just the constructor.
    """
    if isinstance(obj, dict):
        if "__type" not in obj:
            raise TypeError(f"an encoded asset condition needs a '__type' key, got {obj!r}")
        return dict(obj)
    if (kind := _condition_kind(obj)) is not None:
        return {"__type": kind, "objects": [encode_asset_condition(x) for x in obj.objects]}
    type_name = type(obj).__name__
    name = getattr(obj, "name", None)
    uri = getattr(obj, "uri", None)
    group = getattr(obj, "group", None)
    if "Alias" in type_name:
        return {"__type": _ASSET_ALIAS, "name": name, "group": group if group is not None else "asset"}
    if "Ref" in type_name:
        fields = {k: v for k, v in (("name", name), ("uri", uri)) if v is not None}
        return {"__type": _ASSET_REF, **fields}
    if name is None and uri is None:
        raise TypeError(f"{obj!r} is not an asset: it has neither a 'uri' nor a 'name'")
    extra = getattr(obj, "extra", None)
    encoded = {
        "__type": _ASSET,
        "name": name if name is not None else uri,
        "uri": uri if uri is not None else name,
        "group": group if group is not None else "asset",
        "extra": dict(extra) if extra else {},
    }
    watchers = getattr(obj, "watchers", None)
    if watchers:  # as Airflow, only when there are any: what each AssetWatcher's trigger watches
        encoded["watchers"] = [{"name": w.name, **w.watch} for w in watchers]
    access_control = getattr(obj, "access_control", None)
    if access_control is not None and not access_control.is_default():  # as Airflow: stored, no effect
        encoded["access_control"] = access_control.serialize()
    return encoded


class AssetTriggeredTimetable(_TrivialTimetable):
    """A DAG run by asset events rather than by time; the scheduler never creates runs from the clock.

    The condition is held in Airflow's serialized form (``{"__type": "asset_all", "objects": [...]}``), so
    it is JSON-ready and can be evaluated without the authoring classes.
    """

    description: str = "Triggered by assets"

    def __init__(self, assets: Any) -> None:
        super().__init__()
        if isinstance(assets, Iterable) and not isinstance(assets, dict | str | bytes) and not is_asset_like(assets):
            members = list(assets)
            if not all(is_asset_like(x) for x in members):
                raise TypeError(
                    "All elements in 'schedule' should be either assets, asset references, or asset aliases"
                )
            self.asset_condition = {"__type": _ASSET_ALL, "objects": [encode_asset_condition(x) for x in members]}
        else:
            self.asset_condition = encode_asset_condition(assets)

    def __hash__(self) -> int:
        return hash((type(self), repr(self.asset_condition)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.asset_condition!r})"

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        return cls(data["asset_condition"])

    def serialize(self) -> dict[str, Any]:
        return {"asset_condition": self.asset_condition}

    @property
    def summary(self) -> str:
        return "Asset"
