"""Airflow's server-side objects (``DagRun``, ``TaskInstance``, ``clear_task_instances``, ...) as names a module
can import but not use.

Provider modules import some of them at module level for code paths Updraft never takes (a Databricks "repair
run" button served by Airflow's web server, a query of the metadata database). The import succeeds, so the module
and its operators load; any use (calling, instantiating, reading a class attribute such as ``DagRun.find``)
raises ``UnsupportedFeatureError`` naming the object, so nothing is accepted silently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from updraft.sdk.exceptions import UnsupportedFeatureError

NO_METADATA_DB = ("Updraft has no metadata database that DAG code can query; read run state through the task "
                  "context (get_current_context) or the REST API")


class _ServerOnly(type):
    """The metaclass of a placeholder class: every use names the object and why it is not there."""

    _feature: str
    _hint: str

    def __call__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        raise UnsupportedFeatureError(cls._feature, cls._hint)

    def __getattr__(cls, name: str) -> NoReturn:
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnsupportedFeatureError(f"{cls._feature}.{name}", cls._hint)


def server_only_class(path: str, hint: str = NO_METADATA_DB) -> type:
    """A placeholder for the class at ``path`` (``airflow.models.dagrun.DagRun``)."""
    module, _, name = path.rpartition(".")
    return _ServerOnly(name, (), {"_feature": path, "_hint": hint, "__module__": module,
                                  "__doc__": f"Airflow's {path}: importable, unusable in Updraft ({hint})."})


def server_only_function(path: str, hint: str = NO_METADATA_DB) -> Callable[..., NoReturn]:
    """A placeholder for the function at ``path``: calling it raises."""

    def unavailable(*args: Any, **kwargs: Any) -> NoReturn:
        raise UnsupportedFeatureError(path, hint)

    unavailable.__name__ = unavailable.__qualname__ = path.rpartition(".")[2]
    return unavailable
