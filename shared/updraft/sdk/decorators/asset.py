"""``@asset`` and ``@asset.multi``: a function that materializes assets, as a DAG of one task (Airflow 3's
``airflow.sdk.definitions.asset.decorators``).

``@asset(schedule=...)`` on ``def name(...)`` defines the asset ``name`` (``uri``, ``group``, ``extra`` as given)
and a DAG ``name`` with one task ``name`` whose outlet is that asset; ``@asset.multi(outlets=[...])`` is the same
with several outlets, the DAG and task named after the function. The function's parameters without defaults name
its inlets (``def report(raw)`` reads the asset ``raw``); ``self`` is the asset itself, ``context`` the task's
context and ``outlet_events`` the context's accessor. A ``@task``-decorated function keeps its own operator, with
the definition's outlets.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

from updraft.operators.python import PythonOperator
from updraft.sdk.assets import Asset, AssetAll, BaseAsset
from updraft.sdk.dag import DAG

_INVALID_INLET_ASSET_NAMES = ("self", "context", "outlet_events")
_DEFINED: dict[str, Asset] = {}  # the assets @asset defined in this process, by name: what inlets resolve to


def _validate_asset_function_arguments(f: Callable[..., Any]) -> None:
    for name, param in inspect.signature(f).parameters.items():
        if param.kind == inspect.Parameter.VAR_POSITIONAL:
            raise TypeError(f"wildcard '*{name}' is not supported in @asset")
        if param.kind == inspect.Parameter.VAR_KEYWORD:
            raise TypeError(f"wildcard '**{name}' is not supported in @asset")
        if param.kind == inspect.Parameter.POSITIONAL_ONLY and param.default is inspect.Parameter.empty:
            raise TypeError(f"positional-only argument '{name}' without a default is not supported in @asset")


class _AssetMainOperator(PythonOperator):
    """The one task of an ``@asset`` DAG: calls the function with its inlet assets, itself, and the context."""

    def __init__(self, *, definition_name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._definition_name = definition_name

    @classmethod
    def from_definition(cls, definition: AssetDefinition | MultiAssetDefinition) -> _AssetMainOperator:
        function = definition.function
        _validate_asset_function_arguments(function)
        return cls(
            task_id=function.__name__,
            inlets=[Asset.ref(name=name) for name, param in inspect.signature(function).parameters.items()
                    if name not in _INVALID_INLET_ASSET_NAMES and param.default is inspect.Parameter.empty],
            outlets=list(definition.iter_outlets()),
            python_callable=function,
            definition_name=definition.name,
        )

    def execute(self, context: Any) -> Any:
        self.op_args, self.op_kwargs = [], dict(self._iter_kwargs(context))
        self._outlet_events = context.get("outlet_events")
        return self.execute_callable()

    def _iter_kwargs(self, context: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
        for key, param in inspect.signature(self.python_callable).parameters.items():
            if param.default is not inspect.Parameter.empty:
                yield key, param.default
            elif key == "self":
                yield key, _DEFINED.get(self._definition_name) or Asset(name=self._definition_name)
            elif key == "context":
                yield key, context
            elif key == "outlet_events":
                yield key, context["outlet_events"]
            else:
                yield key, _DEFINED.get(key) or Asset(name=key)


def _instantiate_task(definition: AssetDefinition | MultiAssetDefinition) -> None:
    decorated = definition.function
    if getattr(decorated, "_airflow_is_task_decorator", False):
        kwargs = decorated.kwargs  # type: ignore[attr-defined]
        if "outlets" in kwargs:
            raise TypeError("@task decorator with 'outlets' argument is not supported in @asset")
        kwargs["outlets"] = list(definition.iter_outlets())
        decorated()
    else:
        _AssetMainOperator.from_definition(definition)


class AssetDefinition(Asset):
    """The asset an ``@asset`` function defines; making it also makes its DAG."""

    def __init__(self, *, name: str, uri: str, group: str, extra: dict[str, Any], function: Callable[..., Any],
                 source: asset) -> None:
        super().__init__(name=name, uri=uri, group=group, extra=extra, watchers=source.watchers)
        self.function = function
        _DEFINED[name] = self
        with source.create_dag(default_dag_id=name):
            _instantiate_task(self)

    def iter_outlets(self) -> Iterator[BaseAsset]:
        yield self


class MultiAssetDefinition(AssetAll):
    """What ``@asset.multi`` returns: all of its outlets (usable wherever an asset condition is)."""

    def __init__(self, *, name: str, function: Callable[..., Any], source: _Multi) -> None:
        super().__init__(*source.outlets)
        self.name = name
        self.function = function
        with source.create_dag(default_dag_id=function.__name__):
            _instantiate_task(self)

    def iter_outlets(self) -> Iterator[BaseAsset]:
        yield from self.objects


class _DAGFactory:
    """The DAG arguments ``@asset`` and ``@asset.multi`` take (Airflow's ``_DAGFactory``)."""

    def __init__(self, *, schedule: Any, is_paused_upon_creation: bool | None = None, dag_id: str | None = None,
                 dag_display_name: str | None = None, description: str | None = None,
                 params: Mapping[str, Any] | None = None, on_success_callback: Any = None,
                 on_failure_callback: Any = None, access_control: dict[str, Any] | None = None,
                 owner_links: dict[str, str] | None = None, tags: Collection[str] = ()) -> None:
        self.schedule = schedule
        self.dag_args: dict[str, Any] = {
            "is_paused_upon_creation": is_paused_upon_creation, "description": description, "params": params,
            "on_success_callback": on_success_callback, "on_failure_callback": on_failure_callback,
            "access_control": access_control, "owner_links": dict(owner_links or {}), "tags": set(tags)}
        self.dag_id = dag_id
        self.dag_display_name = dag_display_name

    def create_dag(self, *, default_dag_id: str) -> Any:
        dag_id = self.dag_id or default_dag_id
        return DAG(dag_id=dag_id, schedule=self.schedule, catchup=False,
                   dag_display_name=self.dag_display_name or dag_id, auto_register=True, **self.dag_args)


class _Multi(_DAGFactory):
    """``@asset.multi(outlets=[...], schedule=...)``: one task that emits several assets."""

    def __init__(self, *, outlets: Collection[BaseAsset], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outlets = list(outlets)

    def __call__(self, f: Callable[..., Any]) -> MultiAssetDefinition:
        if f.__name__ != f.__qualname__:
            raise ValueError("nested function not supported")
        if not self.outlets:
            raise ValueError("no outlets provided")
        return MultiAssetDefinition(function=f, source=self, name=f.__name__)


class asset(_DAGFactory):
    """``@asset(schedule=..., uri=..., group=..., extra=...)``: the function materializes the asset it names."""

    multi = _Multi

    def __init__(self, *, name: str | None = None, uri: str | None = None, group: str = Asset.asset_type,
                 extra: dict[str, Any] | None = None, watchers: list[Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.watchers = list(watchers or ())
        self.name = name
        self.uri = uri
        self.group = group
        self.extra = dict(extra or {})

    def __call__(self, f: Callable[..., Any]) -> AssetDefinition:
        if f.__name__ != f.__qualname__:
            raise ValueError("nested function not supported")
        name = self.name or f.__name__
        return AssetDefinition(name=name, uri=name if self.uri is None else str(self.uri), group=self.group,
                               extra=self.extra, function=f, source=self)
