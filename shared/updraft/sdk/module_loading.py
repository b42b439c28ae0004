"""Airflow's ``module_loading`` helpers (``airflow.sdk.module_loading``, ``airflow.utils.module_loading``):
objects by dotted path and back, and the entry points of installed distributions."""

from __future__ import annotations

import functools
import inspect
import pkgutil
import re
from collections.abc import Callable, Iterator
from importlib import import_module, metadata
from types import ModuleType
from typing import Any

EPnD = tuple[metadata.EntryPoint, metadata.Distribution]

_DOTPATH = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*(\.[a-zA-Z_][a-zA-Z0-9_]*)*$")


def import_string(dotted_path: str) -> Any:
    """The attribute named by the last part of ``dotted_path`` in the module the rest names; ImportError when
    either is missing."""
    try:
        module_path, class_name = dotted_path.rsplit(".", 1)
    except ValueError:
        raise ImportError(f"{dotted_path} doesn't look like a module path") from None
    module = import_module(module_path)
    try:
        return getattr(module, class_name)
    except AttributeError:
        raise ImportError(f'Module "{module_path}" does not define a "{class_name}" attribute/class') from None


def qualname(o: object, use_qualname: bool = False, exclude_module: bool = False) -> str:
    """The dotted path ``import_string`` reads back (a class, a function, or an instance's class)."""
    if callable(o) and hasattr(o, "__module__"):
        if exclude_module:
            if hasattr(o, "__qualname__"):
                return o.__qualname__
            if hasattr(o, "__name__"):
                return o.__name__
            if isinstance(o, functools.partial):
                return qualname(o.func, exclude_module=True)
            return type(o).__qualname__
        if use_qualname and hasattr(o, "__qualname__"):
            return f"{o.__module__}.{o.__qualname__}"
        if hasattr(o, "__name__"):
            return f"{o.__module__}.{o.__name__}"
    cls = o if isinstance(o, type) else type(o)
    if exclude_module:
        return cls.__qualname__
    if cls.__module__ and cls.__module__ != "__builtin__":
        return f"{cls.__module__}.{cls.__qualname__}"
    return cls.__qualname__


def iter_namespace(ns: ModuleType) -> Iterator[pkgutil.ModuleInfo]:
    return pkgutil.iter_modules(ns.__path__, ns.__name__ + ".")


def is_valid_dotpath(path: str) -> bool:
    """Whether ``path`` has the form ``package.module.name``."""
    return isinstance(path, str) and bool(_DOTPATH.match(path))


def accepts_context(callback: Callable) -> bool:
    """Whether ``callback`` takes a ``context`` argument or ``**kwargs``."""
    try:
        params = inspect.signature(callback).parameters
    except (ValueError, TypeError):
        return True
    return "context" in params or any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values())


def entry_points_with_dist(group: str) -> Iterator[EPnD]:
    """The entry points of ``group`` of every installed distribution, with the distribution (read afresh each
    call: the environment's packages can be activated after Updraft started)."""
    for dist in metadata.distributions():
        for entry_point in dist.entry_points:
            if entry_point.group == group:
                yield entry_point, dist
