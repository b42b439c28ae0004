"""Values inside a serialized DAG: JSON with ``{"__type": ..., "__var": ...}`` tags for what JSON lacks.

Nothing is pickled. Code (callables) and objects with no JSON form are recorded by name or by a sanitized repr,
and decode to marker objects (``CallableRef``, ``OpaqueValue``) that encode back to the same JSON, so a
serialized DAG round-trips byte for byte without ever importing user code.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import math
import re
from dataclasses import dataclass
from typing import Any

TYPE = "__type"
VAR = "__var"
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


@dataclass(frozen=True)
class CallableRef:
    """A function or class in the DAG file, known by its qualified name."""

    name: str


@dataclass(frozen=True)
class OpaqueValue:
    """A value with no JSON form, kept as its type name and repr (for display only)."""

    type_name: str
    text: str


@dataclass(frozen=True)
class XComRef:
    """A reference to another task's XCom, as the scheduler needs it for mapping and dependencies."""

    task_id: str
    key: str = "return_value"


@dataclass(frozen=True)
class XComMapRef:
    arg: Any
    callables: tuple[str, ...]


@dataclass(frozen=True)
class XComZipRef:
    """``a.zip(b, ...)``; ``fillvalue`` is NOTSET for a plain zip (shortest input wins)."""

    args: tuple[Any, ...]
    fillvalue: Any = None


@dataclass(frozen=True)
class XComConcatRef:
    args: tuple[Any, ...]


@dataclass(frozen=True)
class TaggedValue:
    """An SDK object (a task or asset reference) kept as tagged data; only the task runtime rebuilds it."""

    kind: str
    data: Any


@dataclass(frozen=True)
class DagParamRef:
    """A ``@dag`` function argument, resolved from the run's params when a task runs."""

    name: str


def _qualname(obj: Any) -> str:
    """A stable name for code: never a repr with a memory address, or the same file would hash differently."""
    import functools

    if isinstance(obj, functools.partial):
        return f"functools.partial({_qualname(obj.func)})"
    module = getattr(obj, "__module__", None) or "?"
    if module.startswith("unusual_prefix_"):
        module = "<dag file>"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if not isinstance(name, str):  # a callable instance: name its class
        name = type(obj).__qualname__
    return f"{module}.{name}"


def _sort_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def encode_value(value: Any) -> Any:
    # lazy: cold start (the scheduler and API decode without the SDK)
    from updraft.sdk.param import NOTSET, Param

    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return encode_value(value.value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {TYPE: "float", VAR: repr(value)}
    if isinstance(value, list):
        return [encode_value(v) for v in value]
    if isinstance(value, tuple):
        return {TYPE: "tuple", VAR: [encode_value(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {TYPE: "set", VAR: sorted((encode_value(v) for v in value), key=_sort_key)}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            body = {k: encode_value(v) for k, v in value.items()}
            return {TYPE: "dict", VAR: body} if TYPE in value else body
        return {TYPE: "dict_items", VAR: sorted(([encode_value(k), encode_value(v)] for k, v in value.items()),
                                                key=_sort_key)}
    if isinstance(value, dt.datetime):
        return {TYPE: "datetime", VAR: value.isoformat()}
    if isinstance(value, dt.date):
        return {TYPE: "date", VAR: value.isoformat()}
    if isinstance(value, dt.timedelta):
        return {TYPE: "timedelta", VAR: value.total_seconds()}
    if value is NOTSET:
        return {TYPE: "notset", VAR: None}
    if isinstance(value, Param):
        return {TYPE: "param", VAR: encode_param(value)}
    if isinstance(value, (CallableRef, OpaqueValue, XComRef, XComMapRef, XComZipRef, XComConcatRef,
                          DagParamRef, TaggedValue)):
        return _encode_ref(value)
    ref = _sdk_object_ref(value)
    if ref is not None:
        return _encode_ref(ref)
    if callable(value):
        return _encode_ref(CallableRef(_qualname(value)))
    return _encode_ref(OpaqueValue(type(value).__name__, _ADDRESS.sub("", repr(value))))


def _sdk_object_ref(value: Any) -> Any:
    """The marker a live SDK object (XComArg, DagParam, task, asset) decodes to, or None for anything else.

    Encoding goes through the marker so that each tag's JSON shape is written once, in ``_encode_ref``,
    and a live object and its decoded marker cannot encode differently.
    """
    # lazy: cold start (the scheduler and API decode without the SDK)
    from updraft.sdk.decorators.dag import DagParam
    from updraft.sdk.node import TaskNode
    from updraft.sdk.xcom_arg import ConcatXComArg, MapXComArg, PlainXComArg, ZipXComArg

    if isinstance(value, PlainXComArg):
        return XComRef(value.operator.task_id, value.key)
    if isinstance(value, MapXComArg):
        return XComMapRef(value.arg, tuple(_qualname(f) for f in value.callables))
    if isinstance(value, ZipXComArg):
        # NOTSET (plain zip) and None (zip_longest filling with None) must stay distinct.
        return XComZipRef(tuple(value.args), value.fillvalue)
    if isinstance(value, ConcatXComArg):
        return XComConcatRef(tuple(value.args))
    if isinstance(value, DagParam):
        return DagParamRef(value.name)
    if isinstance(value, TaskNode):
        return TaggedValue("task", value.task_id)
    as_expression = getattr(value, "as_expression", None)
    if callable(as_expression) and not isinstance(value, type):
        return TaggedValue("asset", encode_value(as_expression()))
    return None


def _notset() -> Any:
    # lazy: cold start (the scheduler and API decode without the SDK)
    from updraft.sdk.param import NOTSET

    return NOTSET


def _encode_ref(value: Any) -> Any:
    if isinstance(value, CallableRef):
        return {TYPE: "callable", VAR: value.name}
    if isinstance(value, OpaqueValue):
        return {TYPE: "repr", VAR: {"type": value.type_name, "repr": value.text}}
    if isinstance(value, XComRef):
        return {TYPE: "xcomref", VAR: {"task_id": value.task_id, "key": value.key}}
    if isinstance(value, XComMapRef):
        return {TYPE: "xcom_map", VAR: {"arg": encode_value(value.arg), "callables": list(value.callables)}}
    if isinstance(value, XComZipRef):
        return {TYPE: "xcom_zip", VAR: {"args": [encode_value(a) for a in value.args],
                                         "fillvalue": encode_value(value.fillvalue)}}
    if isinstance(value, XComConcatRef):
        return {TYPE: "xcom_concat", VAR: {"args": [encode_value(a) for a in value.args]}}
    if isinstance(value, TaggedValue):
        return {TYPE: value.kind, VAR: value.data}
    return {TYPE: "dagparam", VAR: {"name": value.name}}


def encode_param(param: Any) -> dict[str, Any]:
    return {"default": encode_value(param.value), "description": param.description,
            "schema": encode_value(param.schema), "source": param.source}


def decode_param(data: dict[str, Any]) -> Any:
    # lazy: cold start (the scheduler and API decode without the SDK)
    from updraft.sdk.param import Param

    return Param(decode_value(data["default"]), data.get("description"), data.get("source"),
                 schema=decode_value(data.get("schema") or {}))


def decode_value(data: Any) -> Any:
    import pendulum

    if isinstance(data, list):
        return [decode_value(v) for v in data]
    if not isinstance(data, dict):
        return data
    if TYPE not in data:
        return {k: decode_value(v) for k, v in data.items()}
    kind = data[TYPE]
    var: Any = data.get(VAR)  # the JSON payload whose shape `kind` names
    if kind == "dict":
        return {k: decode_value(v) for k, v in var.items()}
    if kind == "dict_items":
        return {_hashable(decode_value(k)): decode_value(v) for k, v in var}
    if kind == "tuple":
        return tuple(decode_value(v) for v in var)
    if kind == "set":
        return {_hashable(decode_value(v)) for v in var}
    if kind == "float":
        return float(var)
    if kind == "datetime":
        # A naive datetime stays naive: pendulum.parse would make it UTC and change the document.
        value = dt.datetime.fromisoformat(var)
        return value if value.tzinfo is None else pendulum.parse(var)
    if kind == "date":
        return dt.date.fromisoformat(var)
    if kind == "timedelta":
        return dt.timedelta(seconds=var)
    if kind == "notset":
        return _notset()
    if kind == "param":
        return decode_param(var)
    if kind == "callable":
        return CallableRef(var)
    if kind == "repr":
        return OpaqueValue(var["type"], var["repr"])
    if kind == "xcomref":
        return XComRef(var["task_id"], var["key"])
    if kind == "xcom_map":
        return XComMapRef(decode_value(var["arg"]), tuple(var["callables"]))
    if kind == "xcom_zip":
        return XComZipRef(tuple(decode_value(a) for a in var["args"]), decode_value(var["fillvalue"]))
    if kind == "xcom_concat":
        return XComConcatRef(tuple(decode_value(a) for a in var["args"]))
    if kind == "dagparam":
        return DagParamRef(var["name"])
    if kind in ("task", "asset"):
        return TaggedValue(kind, var)
    raise ValueError(f"unknown serialized type {kind!r}")


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value
