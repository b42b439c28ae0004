"""Jinja rendering of template fields, as Airflow's ``Templater`` does it.

- The environment is the DAG's: search path = the DAG file's folder then ``template_searchpath``;
  ``template_undefined`` (StrictUndefined unless the DAG says otherwise); ``user_defined_macros`` as globals and
  ``user_defined_filters`` next to Airflow's date filters; ``jinja_environment_kwargs``; a NativeEnvironment when
  ``render_template_as_native_obj`` (the task's setting wins over the DAG's).
- Strings ending with one of the task's ``template_ext`` are file names, loaded through that search path.
- Lists, tuples, sets and dict values render recursively; an object with its own ``template_fields`` renders
  those; an XComArg is replaced by its value (never rendered again), as are values listed in ``skip`` (what a
  mapped task received from XComs).
jinja2 is imported on first use: tasks without templates never pay for it.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
from collections.abc import Mapping
from typing import Any

from updraft.runtime.xcom import resolve_xcom_arg
from updraft.sdk.exceptions import AirflowException
from updraft.sdk.execution import use_field_renderer
from updraft.sdk.param import NOTSET
from updraft.sdk.xcom_arg import MappedArgument, XComArg


def _ds(value: dt.datetime | None) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%d")


def _ds_nodash(value: dt.datetime | None) -> str | None:
    return None if value is None else value.strftime("%Y%m%d")


def _ts(value: dt.datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _ts_nodash(value: dt.datetime | None) -> str | None:
    return None if value is None else value.strftime("%Y%m%dT%H%M%S")


def _ts_nodash_with_tz(value: dt.datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("-", "").replace(":", "")


FILTERS = {"ds": _ds, "ds_nodash": _ds_nodash, "ts": _ts, "ts_nodash": _ts_nodash,
           "ts_nodash_with_tz": _ts_nodash_with_tz}


def _is_safe_attribute(self: Any, obj: Any, attr: str, value: Any) -> bool:
    """Airflow's: "_" attributes are allowed, only internal ("__") ones are blocked."""
    import jinja2.sandbox

    return not jinja2.sandbox.is_internal_attribute(obj, attr)


@functools.cache
def _sandboxed_env_class() -> type:
    import jinja2.sandbox

    return type("SandboxedEnvironment", (jinja2.sandbox.SandboxedEnvironment,),
                {"is_safe_attribute": _is_safe_attribute})


@functools.cache
def _native_env_class() -> type:
    """Airflow's NativeEnvironment is not sandboxed (only its plain-string environment is)."""
    import jinja2.nativetypes

    return jinja2.nativetypes.NativeEnvironment


def template_env(dag: Any, *, native: bool) -> Any:
    """The DAG's Jinja environment, as Airflow's: sandboxed (but "_" attributes allowed), or native when asked."""
    import jinja2

    searchpath = [getattr(dag, "folder", None) or os.getcwd(), *list(getattr(dag, "template_searchpath", []) or [])]
    kwargs: dict[str, Any] = {
        "loader": jinja2.FileSystemLoader(searchpath),
        "undefined": getattr(dag, "template_undefined", None) or jinja2.StrictUndefined,
        "extensions": ["jinja2.ext.do"],
        "cache_size": 0,
    }
    kwargs.update(getattr(dag, "jinja_environment_kwargs", None) or {})
    env = (_native_env_class() if native else _sandboxed_env_class())(**kwargs)
    env.filters.update(FILTERS)
    env.filters.update(getattr(dag, "user_defined_filters", None) or {})
    env.globals.update(getattr(dag, "user_defined_macros", None) or {})
    return env


def is_native(task: Any, dag: Any) -> bool:
    own = getattr(task, "render_template_as_native_obj", None)
    return bool(getattr(dag, "render_template_as_native_obj", False) if own is None else own)


class Renderer:
    """Renders one task's fields with one environment and context."""

    def __init__(self, env: Any, context: Mapping[str, Any], *, skip: set[int] | None = None,
                 native: bool = False) -> None:
        self.env = env
        self.native = native
        self.context = context
        self.skip = skip or set()
        self._seen: set[int] = set()
        # What makes a string a template for this environment (the DAG may choose its own delimiters).
        self._markers = tuple(m for m in (env.variable_start_string, env.block_start_string,
                                          env.comment_start_string, env.line_statement_prefix,
                                          env.line_comment_prefix) if m)
        self._keeps_newline = bool(env.keep_trailing_newline)

    def _is_plain(self, value: str) -> bool:
        """Whether rendering ``value`` would give it back unchanged (then Jinja is skipped: it is costly).

        Never in a NativeEnvironment ("1" becomes 1); never with a delimiter or a line prefix of the
        environment in it; never when Jinja's newline rules would change it (one trailing newline dropped,
        ``\r`` normalised), as Airflow renders every string.
        """
        if self.native or "\r" in value or (value.endswith("\n") and not self._keeps_newline):
            return False
        return not any(marker in value for marker in self._markers)

    def render_fields(self, obj: Any, fields: Any = None) -> None:
        """Render ``obj``'s template fields in place (Airflow's ``render_template_fields``)."""
        fields = getattr(obj, "template_fields", ()) if fields is None else fields
        ext = tuple(getattr(obj, "template_ext", ()) or ())
        for name in fields:
            if not hasattr(obj, name):
                raise AttributeError(f"{name!r} is configured as a template field but {type(obj).__name__} "
                                     "does not have this attribute.")
            value = getattr(obj, name)
            if value:
                object.__setattr__(obj, name, self.render(value, ext))

    def render(self, value: Any, ext: tuple[str, ...] = ()) -> Any:
        if id(value) in self.skip:
            return value
        if isinstance(value, str):
            if ext and value.endswith(ext):
                return self.env.get_template(value).render(**self.context)
            if self._is_plain(value):
                return value
            return self.env.from_string(value).render(**self.context)
        if isinstance(value, XComArg):
            return resolve_xcom_arg(value, self.context)
        if isinstance(value, MappedArgument):
            # lazy: cold start (runtime.mapping and pendulum only for a mapped argument)
            from updraft.runtime.mapping import resolve_mapped_argument

            return resolve_mapped_argument(value, self.context)
        if type(value).__name__ == "DagParam":
            return resolve_dag_param(value, self.context)
        if isinstance(value, tuple):
            if type(value) is not tuple:  # a namedtuple keeps its type
                return type(value)(*(self.render(v, ext) for v in value))
            return tuple(self.render(v, ext) for v in value)
        if isinstance(value, list):
            return [self.render(v, ext) for v in value]
        if isinstance(value, dict):
            return {k: self.render(v, ext) for k, v in value.items()}
        if isinstance(value, set):
            return {self.render(v, ext) for v in value}
        if getattr(type(value), "template_fields", None) and id(value) not in self._seen:
            self._seen.add(id(value))
            self.render_fields(value)
        return value


def render_task(task: Any, dag: Any, context: Mapping[str, Any], *, skip: set[int] | None = None) -> None:
    """Render every template field of ``task`` in place."""
    if not task.template_fields:
        return
    native = is_native(task, dag)
    Renderer(template_env(dag, native=native), context, skip=skip, native=native).render_fields(task)


def render_value(task: Any, value: Any, context: Mapping[str, Any]) -> Any:
    """Render one value the way ``task``'s fields are rendered (``@task.bash`` renders the command it returns)."""
    dag = task.dag
    native = is_native(task, dag)
    return Renderer(template_env(dag, native=native), context, native=native).render(value, task.template_ext)


def resolve_dag_param(param: Any, context: Mapping[str, Any]) -> Any:
    """A ``@dag`` function argument: the run's value (conf over params, as the context's params hold them)."""
    conf = getattr(context.get("dag_run"), "conf", None) or {}
    if param.name in conf:
        return conf[param.name]
    params = context.get("params") or {}
    if param.name in params:
        return params[param.name]
    if param.default is not NOTSET:
        return param.default
    raise AirflowException(f"No value could be resolved for parameter {param.name}")


def render_object(obj: Any, context: Mapping[str, Any]) -> None:
    """Render ``obj``'s template fields with the environment of the context's DAG (native when the DAG renders
    native objects), as Airflow's ``BaseNotifier.render_template_fields`` does."""
    dag = context.get("dag")
    native = bool(getattr(dag, "render_template_as_native_obj", False))
    Renderer(template_env(dag, native=native), context, native=native).render_fields(obj)


use_field_renderer(render_object)
