"""``airflow.utils.dates`` (Airflow 2): ``days_ago`` and friends."""

from updraft.sdk._internal.unsupported import module_getattr
from updraft.sdk.dates import (
    cron_presets,
    datetime_to_nano,
    days_ago,
    infer_time_unit,
    parse_execution_date,
    scale_time_units,
)

__all__ = [
    "cron_presets",
    "datetime_to_nano",
    "days_ago",
    "infer_time_unit",
    "parse_execution_date",
    "scale_time_units",
]

# Names Airflow has here that Updraft does not support raise an ImportError naming them.
__getattr__ = module_getattr(__name__, globals())
