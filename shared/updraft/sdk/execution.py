"""What an operator's ``execute`` may ask of the running try: the one way from the SDK and operators to the runtime.

DAG files import the SDK and the operators at parse time, and the task runtime imports them to run a try, so
they must never import the runtime back. What they need of a try is either a pure function of its context
(which keyword arguments a callable receives, the ``AIRFLOW_CTX_*`` variables), kept here, or something only the
runtime can do (render a template with the DAG's Jinja environment), asked of the try's ``ti`` through
:class:`TemplateRendering`: the runtime puts its task instance in every context it builds.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol


class TemplateRendering(Protocol):
    """What the context's ``ti`` offers an operator that renders a value at run time (``@task.bash``)."""

    def render_value(self, task: Any, value: Any, context: Mapping[str, Any]) -> Any:
        """``value`` rendered the way ``task``'s template fields are, with ``context``."""


def render_value(task: Any, value: Any, context: Mapping[str, Any]) -> Any:
    """Render one value the way ``task``'s fields are rendered, by the runtime that built ``context``."""
    ti: TemplateRendering = context["ti"]
    return ti.render_value(task, value, context)


def determine_kwargs(function: Callable, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Airflow's ``KeywordParameters.determine(...).unpacking()``: what a callable receives from the context.

    Only the names the function declares, or everything when it takes ``**kwargs``; a positional argument whose
    parameter is named like a context key is an error, as in Airflow.
    """
    signature = inspect.signature(function)
    for name in itertools.islice(signature.parameters, len(args)):
        if name in kwargs:
            raise ValueError(f"The key {name!r} in args is a part of kwargs and therefore reserved.")
    if any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values()):
        return dict(kwargs)
    return {name: kwargs[name] for name in signature.parameters if name in kwargs}


def make_kwargs_callable(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` taking any arguments and passing on only those its signature accepts (Airflow's helper)."""
    import functools

    @functools.wraps(func)
    def kwargs_func(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **determine_kwargs(func, args, kwargs))

    return kwargs_func


class KeywordParameters:
    """Airflow's wrapper of the keyword arguments a callable receives (``determine(...).unpacking()``)."""

    def __init__(self, kwargs: Mapping[str, Any]) -> None:
        self._kwargs = kwargs

    @classmethod
    def determine(cls, function: Callable, args: Sequence[Any], kwargs: Mapping[str, Any]) -> KeywordParameters:
        return cls(determine_kwargs(function, args, kwargs))

    def unpacking(self) -> Mapping[str, Any]:
        return self._kwargs


def context_env_vars(context: Any) -> dict[str, str]:
    """``AIRFLOW_CTX_DAG_ID`` and friends (Airflow's ``context_to_airflow_vars(in_env_var_format=True)``)."""
    ti = context.get("ti")
    run = context.get("dag_run")
    values = {
        "AIRFLOW_CTX_DAG_OWNER": getattr(context.get("task"), "owner", None),
        "AIRFLOW_CTX_DAG_ID": getattr(ti, "dag_id", None),
        "AIRFLOW_CTX_TASK_ID": getattr(ti, "task_id", None),
        "AIRFLOW_CTX_LOGICAL_DATE": run.logical_date.isoformat() if getattr(run, "logical_date", None) else None,
        "AIRFLOW_CTX_TRY_NUMBER": str(ti.try_number) if ti is not None else None,
        "AIRFLOW_CTX_DAG_RUN_ID": getattr(ti, "run_id", None),
    }
    return {k: v for k, v in values.items() if v}


FieldRenderer = Callable[[Any, Mapping[str, Any]], None]
_field_renderer: list[FieldRenderer] = []


def use_field_renderer(renderer: FieldRenderer) -> None:
    """Called by the runtime once: how an object's template fields render with the context's DAG environment."""
    _field_renderer[:] = [renderer]


def render_template_fields(obj: Any, context: Mapping[str, Any]) -> None:
    """Render ``obj``'s ``template_fields`` in place with the Jinja environment of ``context["dag"]``, as
    Airflow's ``Templater.render_template_fields`` (a notifier called back from a try or a DAG callback)."""
    if not _field_renderer:
        raise RuntimeError("templates render only where the task runtime runs (a try or a DAG callback)")
    _field_renderer[0](obj, context)
class SecretsMetastore(Protocol):
    """What a try may ask of the environment's metastore: one variable read, written or deleted, one connection
    read. The runtime provides it (:func:`use_metastore`); a later issue can serve it behind a per-task
    credential without the SDK changing."""

    def get_variable(self, key: str) -> str | None:
        """The variable's value, or None."""

    def set_variable(self, key: str, value: str, description: str | None) -> None: ...

    def delete_variable(self, key: str) -> bool: ...

    def get_connection(self, conn_id: str) -> str | None:
        """The connection in Airflow's JSON form, or None."""


class SecretsBackend(Protocol):
    """A configured secrets backend (Airflow's ``BaseSecretsBackend`` lookups)."""

    def get_variable(self, key: str) -> str | None: ...

    def get_conn_value(self, conn_id: str) -> str | None: ...

    def get_config(self, key: str) -> str | None:
        """A configuration value (an option's ``AIRFLOW__S__K_SECRET`` names ``key``)."""


_backend: list[SecretsBackend] = []


def secrets_backend() -> SecretsBackend | None:
    """The secrets backend ``use_secrets`` set up for this process's tries (None before, or without one)."""
    return _backend[0] if _backend else None


def use_secrets(metastore: SecretsMetastore | None, backend: SecretsBackend | None) -> None:
    """Variables and connections come from ``backend``, then the environment, then ``metastore`` (Airflow's
    order), replacing what was registered before."""
    # lazy: import cost (connections and variables, 20 modules, only when secrets backends are used)
    from updraft.sdk import connection, variable

    variable.reset_backends()
    connection.reset_backends()
    _backend[:] = [backend] if backend is not None else []
    if backend is not None:
        variable.register_backend(backend.get_variable, before_environment=True)
        connection.register_backend(backend.get_conn_value, before_environment=True)
    if metastore is not None:
        variable.register_backend(metastore.get_variable, setter=metastore.set_variable,
                                  deleter=metastore.delete_variable)
        connection.register_backend(metastore.get_connection)
