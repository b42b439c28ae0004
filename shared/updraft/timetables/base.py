"""The timetable protocol: the one interface the scheduler uses to decide when a DAG runs.

Custom timetables written for Airflow subclass :class:`Timetable` from ``airflow.timetables.base`` (a shim
onto this module), so names, signatures and defaults here are Airflow 3's, not ours to improve. The
scheduler only ever sees timetables rebuilt from :meth:`Timetable.serialize` output, which is why
``serialize``/``deserialize`` are part of the contract and not an implementation detail.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

# One class for the whole process, so `except airflow.exceptions.AirflowTimetableInvalid` catches ours.
from updraft.sdk.exceptions import AirflowTimetableInvalid

if TYPE_CHECKING:
    from pendulum import DateTime

__all__ = [
    "AirflowTimetableInvalid",
    "DagRunInfo",
    "DagRunType",
    "DataInterval",
    "TimeRestriction",
    "Timetable",
]


class DagRunType(enum.StrEnum):
    """Why a DAG run exists; its value is the run id prefix Airflow users grep for."""

    BACKFILL_JOB = "backfill"
    SCHEDULED = "scheduled"
    MANUAL = "manual"
    ASSET_TRIGGERED = "asset_triggered"

    def __str__(self) -> str:
        return self.value

    def generate_run_id(self, *, suffix: str) -> str:
        return f"{self}__{suffix}"

    @staticmethod
    def from_run_id(run_id: str) -> DagRunType:
        """Recover the type from a run id; ids without a known prefix were user-chosen, i.e. manual."""
        for run_type in DagRunType:
            if run_id and run_id.startswith(f"{run_type.value}__"):
                return run_type
        return DagRunType.MANUAL


class DataInterval(NamedTuple):
    """The span of data a run covers; both ends must be aware datetimes."""

    start: DateTime
    end: DateTime

    @classmethod
    def exact(cls, at: DateTime) -> DataInterval:
        return cls(start=at, end=at)


class TimeRestriction(NamedTuple):
    """Bounds from the DAG's ``start_date``/``end_date``/``catchup``; ``earliest`` and ``latest`` are inclusive.

    With ``catchup=False`` a timetable must not schedule runs for periods already in the past.
    """

    earliest: DateTime | None
    latest: DateTime | None
    catchup: bool


class DagRunInfo(NamedTuple):
    """What a timetable answers when asked for the next run: when it may start and what data it covers."""

    run_after: DateTime
    data_interval: DataInterval

    @classmethod
    def exact(cls, at: DateTime) -> DagRunInfo:
        return cls(run_after=at, data_interval=DataInterval.exact(at))

    @classmethod
    def interval(cls, start: DateTime, end: DateTime) -> DagRunInfo:
        """A run that starts as soon as its data interval closes (the pre-AIP-39 schedule shape)."""
        return cls(run_after=end, data_interval=DataInterval(start, end))

    @property
    def logical_date(self) -> DateTime:
        return self.data_interval.start


def _run_type_value(run_type: Any) -> str:
    # Callers pass our DagRunType, Airflow-shaped enums from other modules, or plain strings.
    if isinstance(run_type, enum.Enum):
        return str(run_type.value)
    return str(run_type)


class SerializedEquality:
    """Equality for built-in timetables: the same class with the same serialized form.

    The scheduler only ever holds timetables rebuilt from :meth:`Timetable.serialize`, so two instances that
    serialize alike schedule alike. Kept out of :class:`Timetable` itself because Airflow's base class has
    no ``__eq__``, and adding one would make custom subclasses unhashable.
    """

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.serialize() == other.serialize()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        """Each subclass hashes the few fields that identify it, cheaper than hashing its serialized form."""
        raise NotImplementedError(f"{type(self).__name__} must define __hash__")


class Timetable:
    """Base class of every schedule.

    Subclasses override :meth:`next_dagrun_info` and :meth:`infer_manual_data_interval`, and
    :meth:`serialize`/:meth:`deserialize` when ``__init__`` takes arguments. Class attributes are the
    defaults Airflow documents; instances may shadow them (e.g. ``self.description = ...``).
    """

    description: str = ""
    """Human-readable schedule shown in the UI's info tooltip."""

    periodic: bool = True
    """False for schedules that do not repeat (``None``, ``@once``, asset-triggered)."""

    can_be_scheduled: bool = True
    """False only when the scheduler must never create runs on its own (``schedule=None``)."""

    run_ordering: Sequence[str] = ("data_interval_end", "logical_date")
    """DagRun fields the UI sorts this DAG's runs by."""

    active_runs_limit: int | None = None
    """Upper bound on ``max_active_runs`` this schedule can tolerate (1 for ``@continuous``)."""

    asset_condition: dict[str, Any] | None = None
    """The encoded asset condition that triggers the DAG, or None for time-based schedules."""

    partitioned: bool = False
    """Runs carry a partition key worked out before they start (``CronPartitionTimetable``, or the asset
    partitions that triggered them: ``PartitionedAssetTimetable``); see :mod:`updraft.timetables.partitioned`."""

    partitioned_at_runtime: bool = False
    """Tasks name their partition keys as they run (``outlet_events[asset].add_partitions``)."""

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        return cls()

    def serialize(self) -> dict[str, Any]:
        return {}

    def validate(self) -> None:
        """Raise :class:`AirflowTimetableInvalid` when the schedule cannot work; checked at parse time."""
        return None

    @property
    def summary(self) -> str:
        """Short label for the UI's Schedule column; defaults to the class name as in Airflow."""
        return type(self).__name__

    @property
    def type_name(self) -> str:
        """Filterable type label: the bare class name for built-ins, the import path for plugins."""
        # lazy: circle (timetables.registry imports this module)
        from updraft.timetables.registry import is_builtin_timetable

        cls = type(self)
        if is_builtin_timetable(cls):
            return cls.__name__
        return f"{cls.__module__}.{cls.__qualname__}"

    def infer_manual_data_interval(self, *, run_after: DateTime) -> DataInterval:
        raise NotImplementedError()

    def next_dagrun_info(
        self,
        *,
        last_automated_data_interval: DataInterval | None,
        restriction: TimeRestriction,
    ) -> DagRunInfo | None:
        """Next run after *last_automated_data_interval* (None on a DAG's very first run), or None for none now.

        None does not mean "never again": the scheduler asks again later.
        """
        raise NotImplementedError()

    def generate_run_id(
        self,
        *,
        run_type: Any,
        run_after: DateTime | None = None,
        data_interval: DataInterval | None = None,
        **extra: Any,
    ) -> str:
        """``<run_type>__<run_after ISO 8601>``, Airflow 3's run id.

        ``run_after`` may be omitted by Airflow 2-era custom timetables that still call
        ``super().generate_run_id(logical_date=...)``; the logical date then stands in for it.
        """
        when = run_after if run_after is not None else extra.get("logical_date")
        if when is None and data_interval is not None:
            when = data_interval.start
        if when is None:
            raise TypeError("generate_run_id() needs run_after")
        return f"{_run_type_value(run_type)}__{when.isoformat()}"


class GridTimetable(Timetable):
    """A schedule whose runs sit on a grid of instants: cron fire times or fixed deltas.

    ``CronMixin`` or ``DeltaMixin``, listed before this class in the bases, supplies the grid arithmetic.
    Data-interval and trigger schedules walk the same grid with different run semantics, so the four
    operations they rely on are declared once here. Updraft-internal: not part of Airflow's API.
    """

    def _align_to_next(self, current: DateTime) -> DateTime:
        raise NotImplementedError()

    def _align_to_prev(self, current: DateTime) -> DateTime:
        raise NotImplementedError()

    def _get_next(self, current: DateTime) -> DateTime:
        raise NotImplementedError()

    def _get_prev(self, current: DateTime) -> DateTime:
        raise NotImplementedError()
