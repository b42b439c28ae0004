"""The tagged form Airflow's XCom serde stores a value in, and Airflow's readable string of a stored value.

A value JSON cannot hold as itself (a tuple, a set, a datetime, ...) is stored as
``{"__classname__": <qualified name>, "__version__": <int>, "__data__": <JSON>}``, the way
``airflow.sdk.serde`` tags it; :mod:`updraft.runtime.xcom` writes and rebuilds those. :func:`stringify` is
``airflow.serialization.stringify.stringify``: what ``GET .../xcomEntries/{key}?deserialize=true`` answers,
without importing (or trusting) the classes the tags name.
"""

from __future__ import annotations

from typing import Any

CLASSNAME, VERSION, DATA = "__classname__", "__version__", "__data__"
TAGGED = frozenset((CLASSNAME, VERSION, DATA))
COLLECTIONS = ("builtins.tuple", "builtins.set", "builtins.frozenset")


def is_tagged(value: Any) -> bool:
    return isinstance(value, dict) and value.keys() == TAGGED


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
