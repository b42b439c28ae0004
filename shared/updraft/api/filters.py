"""Range filters over response dicts that several resources share: Airflow's ``<field>_gte/_gt/_lte/_lt``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from updraft.api.formats import parse_datetime
from updraft.api.request import Query

COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "gte": lambda a, b: a >= b, "gt": lambda a, b: a > b, "lte": lambda a, b: a <= b, "lt": lambda a, b: a < b}

Check = Callable[[Mapping[str, Any]], bool]  # over a response (a model's TypedDict too)


def range_names(fields: Sequence[str]) -> list[str]:
    """Every bound parameter of ``fields``: ``start_date_gte``, ``start_date_gt``..."""
    return [f"{field}_{op}" for field in fields for op in COMPARISONS]


def date_bounds(query: Query, fields: Sequence[str]) -> dict[str, dt.datetime]:
    """The date bounds the query string gives for ``fields`` (a bad date is a 422 issue on ``query``)."""
    bounds = {name: query.datetime(name) for name in range_names(fields)}
    return {name: value for name, value in bounds.items() if value is not None}


def range_checks(bounds: Mapping[str, dt.datetime | float | None]) -> list[Check]:
    """One check per bound (``<field>_<op>``: value); a naive datetime bound is UTC. A response whose field is
    null never passes a bound on it, as SQL compares with NULL."""
    checks: list[Check] = []
    for name, bound in bounds.items():
        if bound is None:
            continue
        field, op = name.rsplit("_", 1)
        compare = COMPARISONS[op]
        if isinstance(bound, dt.datetime):
            aware = bound if bound.tzinfo else bound.replace(tzinfo=dt.UTC)

            def check(resp: Mapping[str, Any], field: str = field, bound: dt.datetime = aware,
                      compare: Callable[[Any, Any], bool] = compare) -> bool:
                value = parse_datetime(resp[field]) if resp.get(field) else None
                return value is not None and compare(value, bound)
        else:
            def check(resp: Mapping[str, Any], field: str = field, bound: float = bound,  # type: ignore[misc]
                      compare: Callable[[Any, Any], bool] = compare) -> bool:
                value = resp.get(field)
                return value is not None and compare(value, bound)

        checks.append(check)
    return checks
