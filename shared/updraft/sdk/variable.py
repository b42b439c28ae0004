"""Airflow Variables: ``Variable.get`` reads through an ordered list of backends, the way Airflow's secrets do.

Environment variables ``AIRFLOW_VAR_<KEY>`` come first, as in Airflow; the Updraft store registers itself
behind them with ``register_backend`` when it is available in the process. DAG files often call
``Variable.get`` at top level, so a missing variable must fail with Airflow's KeyError (or return the
default) rather than silently yielding None.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from updraft.sdk._internal.backends import BackendChain
from updraft.sdk.param import NOTSET

__all__ = ["ENV_PREFIX", "Variable", "register_backend", "reset_backends"]

log = logging.getLogger(__name__)

ENV_PREFIX = "AIRFLOW_VAR_"

VariableGetter = Callable[[str], "str | None"]
VariableSetter = Callable[[str, str, "str | None"], None]


_backends: BackendChain[str] = BackendChain(ENV_PREFIX, kind="variable", log_failure=log.exception)
_setter: VariableSetter | None = None


def register_backend(getter: VariableGetter, *, setter: VariableSetter | None = None) -> None:
    """Add a backend after the ones already registered; ``getter(key)`` returns the raw string or None.

    ``setter(key, value, description)`` makes ``Variable.set`` write there; the last one registered wins.
    """
    global _setter
    _backends.register(getter)
    if setter is not None:
        _setter = setter


def reset_backends() -> None:
    """Back to environment variables only (tests, and processes that switch environments)."""
    global _setter
    _backends.reset()
    _setter = None


class Variable:
    """A key/value setting; the same class serves ``airflow.sdk.Variable`` and ``airflow.models.Variable``."""

    def __init__(self, key: str, value: Any = None, description: str | None = None) -> None:
        self.key = key
        self.value = value
        self.description = description

    def __repr__(self) -> str:
        # Values are often secrets; Airflow hides them too.
        return f"Variable(key={self.key!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Variable):
            return NotImplemented
        return (self.key, self.value, self.description) == (other.key, other.value, other.description)

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def get(cls, key: str, default: Any = NOTSET, deserialize_json: bool = False, *,
            default_var: Any = NOTSET) -> Any:
        """The variable's value; ``default`` (Airflow 3) or ``default_var`` (Airflow 2) when it is absent."""
        if default is NOTSET:
            default = default_var
        value = next(_backends.answers(key), None)
        if value is None:
            if default is not NOTSET:
                return default
            raise KeyError(f"Variable {key} does not exist.")
        return json.loads(value) if deserialize_json else value

    @classmethod
    def set(cls, key: str, value: Any, description: str | None = None, serialize_json: bool = False) -> None:
        """Store a value in the registered store; environment variables are read-only, as in Airflow."""
        if _setter is None:
            from updraft.sdk.exceptions import AirflowException

            raise AirflowException(f"Cannot set Variable {key}: no variable store is available in this process "
                                   f"(environment variables {ENV_PREFIX}* are read-only)")
        stored = json.dumps(value, indent=2) if serialize_json else str(value)
        _setter(key, stored, description)

    @classmethod
    def setdefault(cls, key: str, default: Any, description: str | None = None,
                   deserialize_json: bool = False) -> Any:
        """Airflow 2's ``setdefault``: the current value, or store ``default`` and return it."""
        current = cls.get(key, default=None, deserialize_json=deserialize_json)
        if current is None:
            if default is None:
                raise ValueError("Default Value must be set")
            cls.set(key, default, description=description, serialize_json=deserialize_json)
            return default
        return current
