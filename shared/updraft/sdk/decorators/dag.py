"""``@dag``: calling the decorated function builds the DAG (and auto-registers it, as in Airflow 3)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from updraft.sdk.dag import DAG
from updraft.sdk.param import NOTSET


class DagParam:
    """A ``@dag`` function argument: resolved from the run's params when a task uses it (a template value)."""

    def __init__(self, dag: DAG, name: str, default: Any = NOTSET) -> None:
        if default is not NOTSET:
            dag.params[name] = default
        self.name = name
        self.default = default

    def __repr__(self) -> str:
        return f"DagParam({self.name!r})"


def dag(dag_id: Callable | str = "", **decorator_kwargs: Any) -> Any:
    """Support ``@dag``, ``@dag()`` and ``@dag("id", ...)``; the dag_id defaults to the function's name."""
    if callable(dag_id):
        return _DagFactory(dag_id, "", {})

    def wrap(function: Callable) -> _DagFactory:
        return _DagFactory(function, dag_id, decorator_kwargs)

    return wrap


class _DagFactory:
    def __init__(self, function: Callable, dag_id: str, kwargs: dict[str, Any]) -> None:
        self.function = function
        self.dag_id = dag_id or kwargs.pop("dag_id", None) or function.__name__
        self.kwargs = kwargs
        functools.update_wrapper(self, function)

    def __call__(self, *args: Any, **kwargs: Any) -> DAG:
        kwargs_dag = dict(self.kwargs)
        with DAG(self.dag_id, **kwargs_dag) as the_dag:
            if self.function.__doc__ and not the_dag.doc_md:
                the_dag.doc_md = self.function.__doc__  # verbatim, as Airflow does
            the_dag.fileloc = self.function.__code__.co_filename
            bound = inspect.signature(self.function).bind(*args, **kwargs)
            bound.apply_defaults()
            for name, value in list(bound.arguments.items()):
                param = inspect.signature(self.function).parameters[name]
                if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                    continue
                bound.arguments[name] = DagParam(the_dag, name, value)
            self.function(*bound.args, **bound.kwargs)
        return the_dag
