"""Airflow's small helpers (``airflow.utils.helpers``) that provider hooks and operators call: argument checks
(``exactly_one``, ``at_most_one``), request shaping (``prune_dict``, ``merge_dicts``, ``chunks``) and names.

Behaviour is Airflow 3.3's, including its errors (``exactly_one`` refuses an unpacked iterable).
"""

from __future__ import annotations

import getpass
import itertools
import random
import re
import string
from collections.abc import Callable, Generator, Iterable
from typing import Any, TypeVar

from updraft.model.identifiers import ID_LEN
from updraft.model.identifiers import validate_key as _validate_id
from updraft.sdk.exceptions import AirflowConfigException
from updraft.sdk.notset import is_arg_set

T = TypeVar("T")

CAMELCASE_TO_SNAKE_CASE_REGEX = re.compile(r"(?!^)([A-Z]+)")


def validate_key(k: str, max_length: int = ID_LEN) -> None:
    """Airflow's id check: alphanumerics, dashes, dots and underscores, at most ``max_length`` characters."""
    _validate_id(k, max_length=max_length)


def is_container(obj: Any) -> bool:
    """Whether ``obj`` is iterable but not a string."""
    return hasattr(obj, "__iter__") and not isinstance(obj, str)


def chunks(items: list[T], chunk_size: int) -> Generator[list[T], None, None]:
    """Successive ``chunk_size``-long slices of ``items``."""
    if chunk_size <= 0:
        raise ValueError("Chunk size must be a positive integer")
    for i in range(0, len(items), chunk_size):
        yield items[i : i + chunk_size]


def as_flattened_list(iterable: Iterable[Iterable[T]]) -> list[T]:
    """One level flattened: ``(("a", "b"), ("c",))`` -> ``["a", "b", "c"]``."""
    return [e for i in iterable for e in i]


def convert_camel_to_snake(camel_str: str) -> str:
    return CAMELCASE_TO_SNAKE_CASE_REGEX.sub(r"_\1", camel_str).lower()


def merge_dicts(dict1: dict, dict2: dict) -> dict:
    """A new dict: ``dict2`` merged into ``dict1`` recursively (lists are replaced, not concatenated)."""
    merged = dict1.copy()
    for k, v in dict2.items():
        if k in merged and isinstance(v, dict):
            merged[k] = merge_dicts(merged.get(k, {}), v)
        else:
            merged[k] = v
    return merged


def partition(pred: Callable[[T], bool], iterable: Iterable[T]) -> tuple[Iterable[T], Iterable[T]]:
    """(the entries ``pred`` rejects, the entries it accepts)."""
    iter_1, iter_2 = itertools.tee(iterable)
    return itertools.filterfalse(pred, iter_1), filter(pred, iter_2)


def exactly_one(*args: Any) -> bool:
    """Whether exactly one argument is truthy; an iterable must be unpacked (``exactly_one(*items)``)."""
    if is_container(args[0]):
        raise ValueError("Not supported for iterable args. Use `*` to unpack your iterable in the function call.")
    return sum(map(bool, args)) == 1


def at_most_one(*args: Any) -> bool:
    """Whether at most one argument is truthy (``NOTSET`` counts as unset)."""
    return sum(is_arg_set(a) and bool(a) for a in args) in (0, 1)


def prune_dict(val: Any, mode: str = "strict") -> Any:
    """``val`` with its empty elements removed, recursively: ``None`` only (``mode="strict"``), or every falsy
    element (``mode="truthy"``)."""

    def is_empty(x: Any) -> bool:
        if mode == "strict":
            return x is None
        if mode == "truthy":
            return bool(x) is False
        raise ValueError("allowable values for `mode` include 'truthy' and 'strict'")

    def pruned(v: Any) -> tuple[bool, Any]:
        if is_empty(v):
            return False, None
        if isinstance(v, (list, dict)):
            new_val = prune_dict(v, mode=mode)
            return not is_empty(new_val), new_val
        return True, v

    if isinstance(val, dict):
        new_dict = {}
        for k, v in val.items():
            keep, new = pruned(v)
            if keep:
                new_dict[k] = new
        return new_dict
    if isinstance(val, list):
        new_list = []
        for v in val:
            keep, new = pruned(v)
            if keep:
                new_list.append(new)
        return new_list
    return val


TRUE_LIKE_VALUES = {"on", "t", "true", "y", "yes", "1"}


def to_boolean(astring: str | None) -> bool:
    """Airflow's ``utils.strings.to_boolean``: on/t/true/y/yes/1 (any case) are true, anything else false."""
    return astring is not None and astring.strip().lower() in TRUE_LIKE_VALUES


def get_random_string(length: int = 8, choices: str = string.ascii_letters + string.digits) -> str:
    return "".join(random.choices(choices, k=length))


def getuser() -> str:
    """Airflow's ``utils.platform.getuser``: the process's user name; an error when the user has none."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        raise AirflowConfigException("The user that Airflow is running as has no username; you must run Airflow "
                                     "as a full user, with a username and home directory, in order for it to "
                                     "function properly.") from None
