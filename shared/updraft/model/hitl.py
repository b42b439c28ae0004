"""A Human-in-the-loop request and its response, as the deferred task instance keeps them (Airflow's ``hitl_detail``
row, one per try), and the events that resume the try.

An ``HITLOperator`` defers to ``HITLTrigger`` (``updraft.triggers.hitl``); its kwargs carry the request, which the
deferral writes on the instance as ``hitl`` (``request_record``), tagged with the try it belongs to, so a later try
(a retry or a clear) has none until it asks again, and the try's history keeps its own. A response (the REST
route) is recorded on it and resumes the try at once; the wait to ``response_timeout`` resumes it with the response
if one came, else with the defaults recorded as the response (no user), else with Airflow's timeout error event
(``timeout_resume``), as Airflow 3.3's scheduler resolves an ``awaiting_input`` task whose deadline passed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

CLASSPATH = "airflow.providers.standard.triggers.hitl.HITLTrigger"
TIMEOUT_ERROR = "The Human-in-the-loop response timeout has passed without a response."


def is_hitl(trigger_record: Mapping[str, Any] | None) -> bool:
    """Whether a deferred try's trigger record is a Human-in-the-loop wait."""
    return bool(trigger_record) and (trigger_record or {}).get("classpath") == CLASSPATH


def request_record(kwargs: Mapping[str, Any], *, try_number: int, now: dt.datetime) -> dict[str, Any]:
    """The ``hitl`` record of a try that asked (``kwargs``: HITLTrigger's serialized kwargs), no response yet."""
    return {"try_number": try_number, "ti_id": kwargs.get("ti_id"),
            "options": list(kwargs.get("options") or []), "subject": kwargs.get("subject") or "",
            "body": kwargs.get("body"), "defaults": kwargs.get("defaults"), "multiple": bool(kwargs.get("multiple")),
            "params": dict(kwargs.get("params") or {}), "assigned_users": list(kwargs.get("assigned_users") or []),
            "created_at": now.isoformat(), "responded_by": None, "responded_at": None, "chosen_options": None,
            "params_input": {}}


def of_try(hitl: Mapping[str, Any] | None, try_number: int) -> dict[str, Any] | None:
    """The request of try ``try_number`` (None: that try asked nothing)."""
    if not hitl or hitl.get("try_number") != try_number:
        return None
    return dict(hitl)


def responded(hitl: Mapping[str, Any]) -> bool:
    return hitl.get("responded_at") is not None


def param_values(params: Mapping[str, Any]) -> dict[str, Any]:
    """The params' values (a serialized Param's ``value``), what a timeout's defaults record as the input."""
    return {key: value["value"] if isinstance(value, dict) and "value" in value else value
            for key, value in params.items()}


def with_response(hitl: Mapping[str, Any], *, chosen_options: list[str], params_input: Mapping[str, Any],
                  user: Mapping[str, str] | None, now: dt.datetime) -> dict[str, Any]:
    """The record with a response (``user`` None: the defaults a timeout applied)."""
    return {**hitl, "chosen_options": list(chosen_options), "params_input": dict(params_input),
            "responded_by": dict(user) if user else None, "responded_at": now.isoformat()}


def response_event(hitl: Mapping[str, Any]) -> dict[str, Any]:
    """The event ``execute_complete`` resumes with once a response is recorded (``responded_at`` as ISO text: the
    operator reads it back as a datetime)."""
    return {"chosen_options": list(hitl.get("chosen_options") or []), "params_input": hitl.get("params_input") or {},
            "responded_at": hitl.get("responded_at"), "responded_by_user": hitl.get("responded_by"),
            "timedout": hitl.get("responded_by") is None}


def response_problem(hitl: Mapping[str, Any], chosen_options: list[str]) -> str | None:
    """Why a response may not be recorded (Airflow's write-side checks); None: it may."""
    allowed = set(hitl.get("options") or [])
    if invalid := set(chosen_options) - allowed:
        return f"Invalid options {sorted(invalid)}; allowed options are {sorted(allowed)}."
    if not hitl.get("multiple") and len(chosen_options) > 1:
        return "Multiple options chosen but this Human-in-the-loop task accepts only a single option."
    return None


def timeout_resume(hitl: Mapping[str, Any] | None, now: dt.datetime) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(event, the record to write or None) when the response timeout passed: the response if one came, else the
    defaults recorded as the response, else Airflow's timeout error (``HITLTimeoutError`` in the operator)."""
    if hitl is not None and responded(hitl):
        return {**response_event(hitl), "timedout": False}, None
    if hitl is not None and hitl.get("defaults") is not None:
        record = with_response(hitl, chosen_options=list(hitl["defaults"]),
                               params_input=param_values(hitl.get("params") or {}), user=None, now=now)
        return response_event(record), record
    return {"error": TIMEOUT_ERROR, "error_type": "timeout"}, None
