"""List filters over response dicts that several resources share (Airflow's ``<field>_gte`` date ranges)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from updraft.api.formats import parse_datetime
from updraft.api.request import Query

_COMPARISONS: dict[str, Callable[[dt.datetime, dt.datetime], bool]] = {
    "gte": lambda a, b: a >= b, "gt": lambda a, b: a > b, "lte": lambda a, b: a <= b, "lt": lambda a, b: a < b}

Check = Callable[[dict[str, Any]], bool]


def date_filters(query: Query, fields: Sequence[str]) -> list[Check]:
    """``<field>_gte/_gt/_lte/_lt`` for each of ``fields`` (response keys holding ISO datetimes); a naive bound
    is UTC. A response whose field is null never passes a bound on it, as SQL compares with NULL."""
    checks: list[Check] = []
    for name in fields:
        for suffix, compare in _COMPARISONS.items():
            bound = query.datetime(f"{name}_{suffix}")
            if bound is None:
                continue
            bound = bound if bound.tzinfo else bound.replace(tzinfo=dt.UTC)

            def check(resp: dict[str, Any], name: str = name, bound: dt.datetime = bound,
                      compare: Callable[[dt.datetime, dt.datetime], bool] = compare) -> bool:
                value = parse_datetime(resp[name]) if resp.get(name) else None
                return value is not None and compare(value, bound)

            checks.append(check)
    return checks
