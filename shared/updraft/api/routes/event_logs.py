"""Event logs: ``GET /eventLogs`` and ``GET /eventLogs/{event_log_id}``, Airflow's ``EventLogResponse``.

Entries are the audit records :mod:`updraft.api.audit` writes for every change made through the API. The list
reads the entries between ``after`` and ``before`` (a key range per shard, :mod:`updraft.store.event_logs`), then
filters, orders and pages them here with Airflow's parameters.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from updraft.api.errors import NotFound
from updraft.api.formats import iso, pattern_matcher
from updraft.api.lookups import field_keys
from updraft.api.pagination import page_of, paginate
from updraft.api.request import Query
from updraft.api.routing import Call, RouteTable

if TYPE_CHECKING:
    from updraft.api.models import EventLogCollectionResponse, EventLogResponse
    from updraft.store.event_logs import EventLog

routes = RouteTable()

ORDER = field_keys("event_log_id", "when", "dag_id", "task_id", "run_id", "event", "logical_date", "owner", "extra",
                   aliases={"id": "event_log_id", "dttm": "when"})
TEXT_FIELDS = ("dag_id", "task_id", "run_id", "owner", "event")


def event_log_response(entry: EventLog) -> EventLogResponse:
    return {"event_log_id": entry.event_log_id, "when": iso(entry.when), "dag_id": entry.dag_id,
            "task_id": entry.task_id, "run_id": entry.run_id, "map_index": entry.map_index,
            "try_number": entry.try_number, "event": entry.event, "logical_date": iso(entry.logical_date),
            "owner": entry.owner, "extra": entry.extra, "dag_display_name": entry.dag_id,
            "task_display_name": entry.task_id}


def prefix_matcher(pattern: str | None) -> Callable[[str | None], bool]:
    """Airflow's ``*_prefix_pattern``: a case-sensitive prefix, ``|`` alternatives, ``%``/``_`` literal, trailing
    non-alphanumeric characters stripped, ``~`` (or nothing) matches everything."""
    if pattern is None or pattern in ("", "~"):
        return lambda _value: True
    prefixes = [re.sub(r"[^0-9A-Za-z]+$", "", part) for part in pattern.split("|")]
    return lambda value: value is not None and any(value.startswith(prefix) for prefix in prefixes)


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    """A bound without an offset is UTC, as Airflow stores its times."""
    return value.replace(tzinfo=dt.UTC) if value is not None and value.tzinfo is None else value


Check = Callable[[Mapping[str, Any]], bool]  # over an EventLogResponse


def _field_is(name: str, wanted: Any) -> Check:
    return lambda response: response[name] == wanted


def _field_matches(name: str, *matchers: Callable[[str | None], bool]) -> Check:
    return lambda response: all(matches(response[name]) for matches in matchers)


def _checks(query: Query) -> list[Check]:
    """Airflow's filters: exact ``dag_id``... , ``*_pattern``, ``*_prefix_pattern``, included/excluded events."""
    checks: list[Check] = []
    for name in TEXT_FIELDS:
        exact = query.string(name)
        if exact is not None:
            checks.append(_field_is(name, exact))
        checks.append(_field_matches(name, pattern_matcher(query.string(f"{name}_pattern")),
                                     prefix_matcher(query.string(f"{name}_prefix_pattern"))))
    for name in ("map_index", "try_number"):
        number = query.integer(name)
        if number is not None:
            checks.append(_field_is(name, number))
    excluded, included = set(query.strings("excluded_events")), set(query.strings("included_events"))
    if excluded:
        checks.append(lambda response: response["event"] not in excluded)
    if included:
        checks.append(lambda response: response["event"] in included)
    return checks


@routes.get("/eventLogs")
def get_event_logs(call: Call) -> EventLogCollectionResponse:
    page = page_of(call.query, ["id"])
    after, before = (_utc(call.query.datetime(name)) for name in ("after", "before"))
    checks = _checks(call.query)
    call.query.check()
    entries = [event_log_response(e) for e in call.store.list_event_logs(after=after, before=before)]
    found, total = paginate([r for r in entries if all(check(r) for check in checks)], page, ORDER)
    return {"event_logs": found, "total_entries": total}


@routes.get("/eventLogs/{event_log_id}")
def get_event_log(call: Call) -> EventLogResponse:
    wanted = call.int_path("event_log_id")
    entry = call.store.get_event_log(wanted)
    if entry is None:
        raise NotFound(f"The Event Log with id: `{wanted}` not found")
    return event_log_response(entry)
