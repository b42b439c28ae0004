"""``AssetOrTimeSchedule``: a DAG that runs on its timetable and also whenever its asset condition is met
(Airflow's ``airflow.timetables.assets.AssetOrTimeSchedule``).

The time part is the wrapped timetable's (the scheduler's clock runs come from it); the asset part is the
``asset_condition`` every timetable carries, which the asset pass (:mod:`updraft.scheduling.asset_triggers`)
evaluates, exactly as for a DAG scheduled on assets alone.
"""

from __future__ import annotations

from typing import Any

from updraft.timetables.base import DagRunInfo, DataInterval, SerializedEquality, TimeRestriction, Timetable
from updraft.timetables.simple import AssetTriggeredTimetable


class AssetOrTimeSchedule(SerializedEquality, Timetable):
    def __init__(self, *, timetable: Timetable, assets: Any) -> None:
        self.timetable = timetable
        self.asset_condition = AssetTriggeredTimetable(assets).asset_condition
        self.description = f"Triggered by assets or {timetable.description}"
        self.periodic = timetable.periodic
        self.can_be_scheduled = timetable.can_be_scheduled
        self.active_runs_limit = timetable.active_runs_limit

    def __repr__(self) -> str:
        return f"{type(self).__name__}(timetable={self.timetable!r}, assets={self.asset_condition!r})"

    def __hash__(self) -> int:
        return hash((type(self), repr(self.asset_condition), self.timetable))

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        # lazy: circle (timetables.registry imports this module)
        from updraft.timetables.registry import decode_timetable

        return cls(timetable=decode_timetable(data["timetable"]), assets=data["asset_condition"])

    def serialize(self) -> dict[str, Any]:
        # lazy: circle (timetables.registry imports this module)
        from updraft.timetables.registry import encode_timetable

        return {"asset_condition": self.asset_condition, "timetable": encode_timetable(self.timetable)}

    def validate(self) -> None:
        self.timetable.validate()

    @property
    def summary(self) -> str:
        return f"Asset or {self.timetable.summary}"

    def infer_manual_data_interval(self, *, run_after: Any) -> DataInterval:
        return self.timetable.infer_manual_data_interval(run_after=run_after)

    def next_dagrun_info(self, *, last_automated_data_interval: DataInterval | None,
                         restriction: TimeRestriction) -> DagRunInfo | None:
        return self.timetable.next_dagrun_info(last_automated_data_interval=last_automated_data_interval,
                                               restriction=restriction)

    def generate_run_id(self, **kwargs: Any) -> str:
        return self.timetable.generate_run_id(**kwargs)
