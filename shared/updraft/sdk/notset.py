"""``NOTSET``: Airflow's sentinel for "argument not given" where ``None`` is a meaningful value.

Airflow keeps it in ``airflow.sdk.definitions._internal.types`` (``ArgNotSet``, ``NOTSET``, and
``SET_DURING_EXECUTION`` for a decorated operator's argument that the callable's return value fills in); provider
operators use them as defaults. Each sentinel is a singleton, survives ``copy``/``deepcopy`` (operators are
copied when mapped) and is falsy.
"""

from __future__ import annotations

from typing import Any, TypeGuard, TypeVar

T = TypeVar("T")


class ArgNotSet:
    """Sentinel type for annotations, useful when None is not viable."""

    def __new__(cls) -> ArgNotSet:
        # One instance per class: SetDuringExecution is a distinct sentinel, not NOTSET.
        instance = cls.__dict__.get("_instance")
        if instance is None:
            instance = super().__new__(cls)
            cls._instance = instance  # type: ignore[attr-defined]
        return instance

    def __repr__(self) -> str:
        return "NOTSET"

    def __bool__(self) -> bool:
        return False

    def __copy__(self) -> ArgNotSet:
        return self

    def __deepcopy__(self, memo: dict) -> ArgNotSet:
        return self

    def __reduce__(self) -> tuple[type, tuple]:
        return type(self), ()


class SetDuringExecution(ArgNotSet):
    """A value computed while the task runs (a decorated operator's argument), unknown at parse time."""

    def __repr__(self) -> str:
        return "SET_DURING_EXECUTION"

    @staticmethod
    def serialize() -> str:
        return "DYNAMIC (set during execution)"


NOTSET: Any = ArgNotSet()
SET_DURING_EXECUTION: Any = SetDuringExecution()


def is_arg_set(value: T | ArgNotSet) -> TypeGuard[T]:
    """Whether ``value`` was given (is not a sentinel)."""
    return not isinstance(value, ArgNotSet)
