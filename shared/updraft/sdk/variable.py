"""Airflow Variables: ``Variable.get`` reads through an ordered list of backends, the way Airflow's secrets do.

The configured secrets backend first, then environment variables ``AIRFLOW_VAR_<KEY>``, then the environment's
metastore, as in Airflow; the runtime registers the backend and the metastore (``register_backend``) for a try.
DAG files often call ``Variable.get`` at top level, so a missing variable must fail with Airflow's KeyError (or
return the default) rather than silently yielding None. A value read under a sensitive key (``password``,
``secret``, ``token``...) is masked in the try's log from then on, as Airflow's secrets masker does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from updraft.sdk._internal.backends import BackendChain
from updraft.sdk.exceptions import AirflowException
from updraft.sdk.param import NOTSET
from updraft.secrets.masker import mask_secret

__all__ = ["ENV_PREFIX", "Variable", "register_backend", "reset_backends"]

log = logging.getLogger(__name__)

ENV_PREFIX = "AIRFLOW_VAR_"

VariableGetter = Callable[[str], "str | None"]
VariableSetter = Callable[[str, str, "str | None"], None]
VariableDeleter = Callable[[str], bool]


_backends: BackendChain[str] = BackendChain(ENV_PREFIX, kind="variable", log_failure=log.exception)
_setter: VariableSetter | None = None
_deleter: VariableDeleter | None = None


def register_backend(getter: VariableGetter, *, setter: VariableSetter | None = None,
                     deleter: VariableDeleter | None = None, before_environment: bool = False) -> None:
    """Add a backend after the ones already registered; ``getter(key)`` returns the raw string or None.

    ``setter(key, value, description)`` makes ``Variable.set`` write there, ``deleter(key)`` makes
    ``Variable.delete`` delete there; the last one registered wins. A configured secrets backend is registered
    ``before_environment``, as Airflow asks it first.
    """
    global _setter, _deleter
    _backends.register(getter, before_environment=before_environment)
    if setter is not None:
        _setter = setter
    if deleter is not None:
        _deleter = deleter


def reset_backends() -> None:
    """Back to environment variables only (tests, and processes that switch environments)."""
    global _setter, _deleter
    _backends.reset()
    _setter = None
    _deleter = None


def _no_store(action: str, key: str) -> Exception:
    return AirflowException(f"Cannot {action} Variable {key}: no variable store is available in this process "
                            f"(environment variables {ENV_PREFIX}* and secrets backends are read-only)")


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
        failures: list[str] = []
        value = _backends.first(key, failures)
        if value is None:
            if default is not NOTSET:
                return default
            reason = f" (a secrets backend failed: {'; '.join(failures)})" if failures else ""
            raise KeyError(f"Variable {key} does not exist.{reason}")
        mask_secret(value, key)
        if not deserialize_json:
            return value
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise json.JSONDecodeError(f"Variable {key} is not valid JSON (deserialize_json=True): {exc.msg}",
                                       exc.doc, exc.pos) from None

    @classmethod
    def set(cls, key: str, value: Any, description: str | None = None, serialize_json: bool = False) -> None:
        """Store a value in the registered store; environment variables are read-only, as in Airflow."""
        if _setter is None:
            raise _no_store("set", key)
        stored = json.dumps(value, indent=2) if serialize_json else str(value)
        mask_secret(stored, key)
        _setter(key, stored, description)
        _backends.forget(key)

    @classmethod
    def delete(cls, key: str) -> None:
        """Delete the variable from the metastore (Airflow's ``Variable.delete``); a missing one is no error."""
        if _deleter is None:
            raise _no_store("delete", key)
        _deleter(key)
        _backends.forget(key)

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
