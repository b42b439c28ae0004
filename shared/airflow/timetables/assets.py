"""``airflow.timetables.assets``: a schedule on time or on assets, whichever comes first."""

from updraft.timetables.assets import AssetOrTimeSchedule

__all__ = ["AssetOrTimeSchedule"]
