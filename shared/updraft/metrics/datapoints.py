"""Reading back a metrics file (``emf.FileLines``): its EMF lines as data points, newest first.

Only the file's last ``TAIL_BYTES`` are read, so a long-lived local system's file costs the same to read as a new
one; a line cut by that window, or one that is not EMF, is skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TAIL_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class DataPoint:
    name: str
    value: float
    unit: str
    timestamp_ms: int
    dimensions: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "unit": self.unit, "timestamp_ms": self.timestamp_ms,
                "dimensions": self.dimensions}


def parse_line(line: str) -> Iterator[DataPoint]:
    """The data points of one EMF line (every value of every metric it declares); none if it is not EMF."""
    try:
        blob = json.loads(line)
        meta = blob["_aws"]
        timestamp = int(meta["Timestamp"])
        for directive in meta["CloudWatchMetrics"]:
            keys = {key for dimension_set in directive["Dimensions"] for key in dimension_set}
            dimensions = {key: str(blob[key]) for key in sorted(keys)}
            for metric in directive["Metrics"]:
                values = blob[metric["Name"]]
                for value in values if isinstance(values, list) else [values]:
                    yield DataPoint(metric["Name"], float(value), metric.get("Unit", "None"), timestamp, dimensions)
    except (ValueError, KeyError, TypeError):
        return


def read_datapoints(path: str | Path, *, names: set[str] | None = None,
                    dimensions: Mapping[str, str] | None = None) -> list[DataPoint]:
    """The data points in the tail of ``path`` (none if it does not exist), newest first; only those named in
    ``names`` (when given) whose dimensions include ``dimensions``."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - TAIL_BYTES))
            text = handle.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return []
    wanted = dict(dimensions or {})
    found = [point for line in text.splitlines() for point in parse_line(line)
             if (names is None or point.name in names)
             and all(point.dimensions.get(key) == value for key, value in wanted.items())]
    found.reverse()
    return found
