"""The tagged form Airflow's XCom serde stores a value in, and Airflow's readable string of a stored value.

A value JSON cannot hold as itself (a tuple, a set, a datetime, ...) is stored as
``{"__classname__": <qualified name>, "__version__": <int>, "__data__": <JSON>}``, the way
``airflow.sdk.serde`` tags it; :mod:`updraft.runtime.xcom` writes and rebuilds those. :func:`stringify` is
``airflow.serialization.stringify.stringify``: what ``GET .../xcomEntries/{key}?deserialize=true`` answers,
without importing (or trusting) the classes the tags name.
"""

from __future__ import annotations

import json
from typing import Any

CLASSNAME, VERSION, DATA = "__classname__", "__version__", "__data__"
TAGGED = frozenset((CLASSNAME, VERSION, DATA))
COLLECTIONS = ("builtins.tuple", "builtins.set", "builtins.frozenset")
# Every key serde reads as a tag (its current ones, its schema id and cache, and its older format's): Airflow's
# ``FORBIDDEN_XCOM_KEYS``, which a value written through the API may not hold, so that no client-made value is
# read back as a tagged one.
RESERVED = frozenset((*TAGGED, "__id__", "__cache__", "__type", "__source", "__var"))


def is_tagged(value: Any) -> bool:
    return isinstance(value, dict) and value.keys() == TAGGED


def reserved_keys_problem(value: Any, where: str = "value") -> str | None:
    """Why ``value`` (a client's JSON) may not be stored as an XCom: a dict at any depth holding a key of
    :data:`RESERVED`, or a string that is itself such JSON (a ``deserialize`` read parses it); None when none.
    Airflow's ``_check_forbidden_xcom_keys``, with its message."""
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return None
        return reserved_keys_problem(decoded, where) if isinstance(decoded, dict | list) else None
    if isinstance(value, dict):
        if found := RESERVED & value.keys():
            return (f"XCom {where} contains reserved serialization keys: {', '.join(sorted(found))}. "
                    "These keys are reserved for internal use.")
        return next((p for k, v in value.items() if (p := reserved_keys_problem(v, f"{where}.{k}"))), None)
    if isinstance(value, list):
        return next((p for i, v in enumerate(value) if (p := reserved_keys_problem(v, f"{where}[{i}]"))), None)
    return None


def stringify(value: Any) -> Any:
    """A stored value as Airflow shows it: JSON as it is, a tagged collection as ``(a,b)``, any other tagged
    value as ``<classname>@version=<n>(<data>)``; an Airflow class's (``airflow.*``: Airflow deserializes those
    in full instead) stays tagged."""
    if isinstance(value, list):
        return [stringify(v) for v in value]
    if not isinstance(value, dict):
        return value
    if not is_tagged(value):
        return {str(k): stringify(v) for k, v in value.items()}
    name, version, data = value[CLASSNAME], value[VERSION], value[DATA]
    if str(name).startswith("airflow."):
        return value
    if name in COLLECTIONS and isinstance(data, list):
        return "(" + ",".join(str(stringify(v)) for v in data) + ")"
    shown = f"{name}@version={version}("
    if isinstance(data, list):
        shown += ",".join(str(stringify(v)) for v in data)
    elif isinstance(data, dict):
        shown += ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={stringify(v)}" for k, v in data.items())
    else:
        shown += f"{data}"
    return shown + ")"
