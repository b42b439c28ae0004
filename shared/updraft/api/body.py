"""Strict JSON request bodies, as Airflow declares them (``additionalProperties: false``).

A body is checked against a small field table instead of pydantic models (the API Lambda's cold import stays
lean); the issues have pydantic's types and messages so a client sees what Airflow would answer: 422 for
malformed JSON, a missing required field, a wrong type, a naive datetime or an unknown field; and for what
Updraft does not take (:mod:`updraft.api.json_text`): JSON nested deeper than its limit, a lone surrogate.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from updraft.api.errors import Unprocessable, issue
from updraft.api.formats import parse_datetime
from updraft.api.json_text import InvalidJson, loads


@dataclass(frozen=True)
class Field:
    kind: str  # bool | int | number | str | strings (a list of them) | list (of anything) | object | datetime |
    #            json (any JSON value)
    required: bool = False
    nullable: bool = True
    minimum: int | None = None
    maximum: int | None = None
    max_length: int | None = None  # characters
    key: bool = False  # the value goes into a DynamoDB key: its UTF-8 size is bounded too (see size_issue)
    aware: bool = True  # a datetime must carry its offset (pydantic's AwareDatetime), else naive is UTC


MAX_ID_BYTES = 960  # a run id in the runs' date sort key: 1024 bytes less the date and separators

_TYPE_ISSUES = {
    "bool": ("bool_type", "Input should be a valid boolean"),
    "int": ("int_type", "Input should be a valid integer"),
    "number": ("float_type", "Input should be a valid number"),
    "strings": ("list_type", "Input should be a valid list"),
    "list": ("list_type", "Input should be a valid list"),
    "str": ("string_type", "Input should be a valid string"),
    "object": ("dict_type", "Input should be a valid dictionary"),
    "datetime": ("datetime_type", "Input should be a valid datetime"),
    "json": ("json_type", "Input should be a valid JSON value"),
}


def _check(spec: Field, value: Any) -> tuple[Any, tuple[str, str] | None]:
    """(the value as the route uses it, None) or (None, (type, msg)) when it has the wrong type."""
    kind = spec.kind
    if kind == "json":
        return value, None
    if kind == "bool" and isinstance(value, bool):
        return value, None
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value, None
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return value, None
    if kind == "strings" and isinstance(value, list):
        if all(item is None or isinstance(item, str) for item in value):
            return value, None
        return None, ("string_type", "Input should be a valid string")
    if kind == "list" and isinstance(value, list):
        return value, None
    if kind == "str" and isinstance(value, str):
        return value, None
    if kind == "object" and isinstance(value, dict):
        return value, None
    if kind == "datetime" and isinstance(value, str):
        parsed = parse_datetime(value)
        if parsed is None:
            return None, ("datetime_from_date_parsing", "Input should be a valid datetime or date")
        if parsed.tzinfo is None:
            if spec.aware:
                return None, ("timezone_aware", "Input should have timezone info")
            parsed = parsed.replace(tzinfo=dt.UTC)
        return parsed.astimezone(dt.UTC), None
    return None, _TYPE_ISSUES[kind]


def _bounds_issue(spec: Field, loc: tuple[str, ...], value: Any) -> dict[str, Any] | None:
    if spec.minimum is not None and value < spec.minimum:
        return issue("greater_than_equal", loc, f"Input should be greater than or equal to {spec.minimum}", value)
    if spec.maximum is not None and value > spec.maximum:
        return issue("less_than_equal", loc, f"Input should be less than or equal to {spec.maximum}", value)
    if spec.max_length is not None:
        return size_issue(loc, value, spec.max_length, key=spec.key)
    return None


def size_issue(loc: tuple[str | int, ...], value: str, max_chars: int, *, key: bool = False) -> dict[str, Any] | None:
    """A string longer than Airflow allows (``max_chars``) or, for a value that goes into a DynamoDB key, longer in
    UTF-8 than the key can hold beside its prefixes (a sort key is at most 1024 bytes), is pydantic's
    ``string_too_long``: refused here rather than failing in the store."""
    too_many_bytes = key and len(value.encode("utf-8", errors="surrogatepass")) > MAX_ID_BYTES
    if len(value) > max_chars or too_many_bytes:
        return issue("string_too_long", loc, f"String should have at most {max_chars} characters", value)
    return None


def load_json(raw: str, loc: tuple[str | int, ...] = ("body",)) -> Any:
    """The JSON value of a client's text (a body, or a field holding JSON text at ``loc``); 422 when it is not
    JSON, nests too deep or holds a lone surrogate, with where (a character position or the path to the string)."""
    try:
        return loads(raw)
    except InvalidJson as err:
        raise Unprocessable([issue(err.kind, (*loc, *err.loc), err.msg, err.value)]) from None


def parse_body(raw: str | None, fields: dict[str, Field]) -> dict[str, Any]:
    """The fields the client sent, typed (pydantic's ``model_fields_set``: an absent optional field is absent,
    not None, so PATCH routes can tell "not sent" from "set to null"). Raises 422 with every issue."""
    if raw is None or not raw.strip():
        raise Unprocessable([issue("missing", ("body",), "Field required", None)])
    data = load_json(raw)
    if not isinstance(data, dict):
        raise Unprocessable([issue("model_attributes_type", ("body",),
                                   "Input should be a valid dictionary or object to extract fields from", data)])
    problems: list[dict[str, Any]] = []
    out: dict[str, Any] = {}
    for name, spec in fields.items():
        if name not in data:
            if spec.required:
                problems.append(issue("missing", ("body", name), "Field required", data))
            continue
        value = data[name]
        if value is None:
            if spec.nullable:
                out[name] = None
            else:
                problems.append(issue(_TYPE_ISSUES[spec.kind][0], ("body", name), _TYPE_ISSUES[spec.kind][1], None))
            continue
        typed, problem = _check(spec, value)
        bounds = problem is None and _bounds_issue(spec, ("body", name), typed)
        if problem is not None:
            problems.append(issue(problem[0], ("body", name), problem[1], value))
        elif bounds:
            problems.append(bounds)
        else:
            out[name] = typed
    problems += [issue("extra_forbidden", ("body", name), "Extra inputs are not permitted", data[name])
                 for name in data if name not in fields]
    if problems:
        raise Unprocessable(problems)
    return out
