"""Airflow's ``macros`` namespace (``{{ macros.ds_add(ds, 1) }}``): its helper functions and the modules it exposes.

Modules are attributes of a namespace rather than imports of this module's own, so ``macros.json`` is the json
module, as in Airflow, and ``dateutil`` is imported only when a template touches it.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import json
import random
import time
import uuid
from typing import Any


def ds_add(ds: str, days: int) -> str:
    """``ds_add("2015-01-01", 5)`` -> ``"2015-01-06"``."""
    if not days:
        return str(ds)
    return (_dt.datetime.strptime(str(ds), "%Y-%m-%d") + _dt.timedelta(days=days)).strftime("%Y-%m-%d")


def ds_format(ds: str, input_format: str, output_format: str) -> str:
    """``ds_format("2015-01-01", "%Y-%m-%d", "%m-%d-%y")`` -> ``"01-01-15"``."""
    return _dt.datetime.strptime(str(ds), input_format).strftime(output_format)


def ds_format_locale(ds: str, input_format: str, output_format: str, locale: str | None = None) -> str:
    """Like ``ds_format`` with Babel-style patterns (needs babel, as in Airflow)."""
    from babel import dates  # type: ignore[import-not-found]

    return dates.format_datetime(_dt.datetime.strptime(str(ds), input_format), output_format, locale=locale)


def datetime_diff_for_humans(dt: Any, since: Any = None) -> str:
    """"3 days ago"-style difference, through pendulum as Airflow does."""
    import pendulum

    return pendulum.instance(dt).diff_for_humans(pendulum.instance(since) if since else None)


class _Macros:
    """The ``macros`` object of the context; unknown names fall back to the modules Airflow exposes lazily."""

    _LAZY_MODULES = {"dateutil": "dateutil", "yaml": "yaml"}

    def __init__(self, extra: dict[str, Any] | None = None) -> None:
        self.ds_add = ds_add
        self.ds_format = ds_format
        self.ds_format_locale = ds_format_locale
        self.datetime_diff_for_humans = datetime_diff_for_humans
        self.datetime = _dt.datetime
        self.timedelta = _dt.timedelta
        self.time = time
        self.uuid = uuid
        self.random = random.random
        self.json = json
        for name, value in (extra or {}).items():
            setattr(self, name, value)

    def __getattr__(self, name: str) -> Any:
        if name in self._LAZY_MODULES:
            module = importlib.import_module(self._LAZY_MODULES[name])
            if name == "dateutil":
                importlib.import_module("dateutil.relativedelta")
                importlib.import_module("dateutil.parser")
            setattr(self, name, module)
            return module
        raise AttributeError(f"macros has no attribute {name!r}")


def macros(extra: dict[str, Any] | None = None) -> _Macros:
    """A fresh namespace (plugins' macros go in ``extra``)."""
    return _Macros(extra)
