"""Partition mappers, windows and wait policies in serialized DAGs: ``{"__type": <Airflow path>, "__var": ...}``.

Only the built-in classes are encoded and decoded. Airflow also accepts user subclasses registered by a
plugin (``AirflowPlugin.partition_mappers`` / ``windows``), which its scheduler imports and calls for every
event; Updraft's scheduler never imports user code, and a mapper's answer depends on each key (nothing the
parser could work out ahead), so a DAG using one fails to parse with :class:`CustomPartitionClassError`.
"""

from __future__ import annotations

from typing import Any

from updraft.timetables.partitions import mappers, temporal, wait_policies, windows

TYPE_KEY = "__type"
VAR_KEY = "__var"

_MAPPERS: dict[str, type[mappers.PartitionMapper]] = {
    "airflow.partition_mappers.allowed_key.AllowedKeyMapper": mappers.AllowedKeyMapper,
    "airflow.partition_mappers.chain.ChainMapper": mappers.ChainMapper,
    "airflow.partition_mappers.fixed_key.FixedKeyMapper": mappers.FixedKeyMapper,
    "airflow.partition_mappers.identity.IdentityMapper": mappers.IdentityMapper,
    "airflow.partition_mappers.product.ProductMapper": mappers.ProductMapper,
    "airflow.partition_mappers.base.RollupMapper": mappers.RollupMapper,
    "airflow.partition_mappers.temporal.FanOutMapper": temporal.FanOutMapper,
    "airflow.partition_mappers.temporal.StartOfHourMapper": temporal.StartOfHourMapper,
    "airflow.partition_mappers.temporal.StartOfDayMapper": temporal.StartOfDayMapper,
    "airflow.partition_mappers.temporal.StartOfWeekMapper": temporal.StartOfWeekMapper,
    "airflow.partition_mappers.temporal.StartOfMonthMapper": temporal.StartOfMonthMapper,
    "airflow.partition_mappers.temporal.StartOfQuarterMapper": temporal.StartOfQuarterMapper,
    "airflow.partition_mappers.temporal.StartOfYearMapper": temporal.StartOfYearMapper,
}
_WINDOWS: dict[str, type[windows.Window]] = {
    f"airflow.partition_mappers.window.{cls.__name__}": cls
    for cls in (windows.HourWindow, windows.DayWindow, windows.WeekWindow, windows.MonthWindow,
                windows.QuarterWindow, windows.YearWindow, windows.SegmentWindow)
}
_WAIT_POLICIES: dict[str, type[wait_policies.WaitPolicy]] = {
    "airflow.partition_mappers.wait_policy.WaitForAll": wait_policies.WaitForAll,
    "airflow.partition_mappers.wait_policy.MinimumCount": wait_policies.MinimumCount,
}


class CustomPartitionClassError(TypeError):
    """A DAG uses a partition mapper, window or wait policy class of its own."""

    def __init__(self, kind: str, cls: type) -> None:
        super().__init__(
            f"custom {kind} {cls.__module__}.{cls.__qualname__} is not supported in Updraft: Airflow's scheduler "
            f"imports a plugin's {kind} classes and calls them for every asset event, and Updraft's scheduler runs "
            f"no user code; compose the built-in ones (ChainMapper, ProductMapper, RollupMapper, FanOutMapper, "
            f"the StartOf*/FixedKey/AllowedKey mappers, the *Window classes, WaitForAll/MinimumCount) instead")


def _encode(kind: str, table: dict[str, Any], obj: Any) -> dict[str, Any]:
    for path, cls in table.items():
        if type(obj) is cls:
            return {TYPE_KEY: path, VAR_KEY: obj.serialize()}
    raise CustomPartitionClassError(kind, type(obj))


def _decode(kind: str, table: dict[str, Any], data: dict[str, Any]) -> Any:
    cls = table.get(data.get(TYPE_KEY, ""))
    if cls is None:
        raise ValueError(f"not a serialized built-in {kind}: {data!r}")
    return cls.deserialize(data.get(VAR_KEY, {}))


def encode_partition_mapper(mapper: mappers.PartitionMapper) -> dict[str, Any]:
    return _encode("partition mapper", _MAPPERS, mapper)


def decode_partition_mapper(data: dict[str, Any]) -> mappers.PartitionMapper:
    decoded: mappers.PartitionMapper = _decode("partition mapper", _MAPPERS, data)
    return decoded


def encode_window(window: windows.Window) -> dict[str, Any]:
    return _encode("window", _WINDOWS, window)


def decode_window(data: dict[str, Any]) -> windows.Window:
    decoded: windows.Window = _decode("window", _WINDOWS, data)
    return decoded


def encode_wait_policy(policy: wait_policies.WaitPolicy) -> dict[str, Any]:
    return _encode("wait policy", _WAIT_POLICIES, policy)


def decode_wait_policy(data: dict[str, Any]) -> wait_policies.WaitPolicy:
    decoded: wait_policies.WaitPolicy = _decode("wait policy", _WAIT_POLICIES, data)
    return decoded
