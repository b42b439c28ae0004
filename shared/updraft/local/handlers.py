"""The deployed Lambda handlers, called in this process as Lambda would call them.

Local mode runs the parser, scheduler and API handlers in its own process (the worker handler runs in the
worker pool, ``workers``). Each call gets a Lambda-like context, and what the handler recorded as metrics is
written afterwards to local mode's metrics file, as the EMF line its function would print.

Powertools' ``Metrics`` keeps its metrics in class attributes, shared by every instance in a process: right for
one Lambda function per process, wrong here, where several functions run at once on several threads (one's
flush would clear, or print, what another was still recording). Each handler's metrics are therefore kept per
thread (``MetricsPerThread``), as if each call had a container of its own.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator, MutableMapping
from typing import Any

from updraft.local.workers import LocalLambdaContext, flush_handler_metrics
from updraft.resources import ResourceNames
from updraft.services import shared_services


class LocalHandlers:
    """The parser, scheduler and API handler modules, imported once (after the environment they read is set)."""

    def __init__(self, names: ResourceNames) -> None:
        self.names = names
        self._scheduler = importlib.import_module("functions.scheduler.handler")
        self._parser = importlib.import_module("functions.parser.handler")
        self._api = importlib.import_module("functions.api.handler")
        self._asset_events = importlib.import_module("functions.asset_events.handler")
        for module in (self._scheduler, self._parser, self._api):  # the asset events handler records none
            keep_metrics_per_thread(module.metrics)
        # A Lambda container serves one request at a time, and the API handler keeps per-request state in its one
        # resolver (Powertools' current event and route arguments): the gateway's threads take turns, as
        # requests to a single warm container would, or one request's route reads another's path parameters.
        self._api_turn = threading.Lock()
        # The parser handler runs in several threads at once (``dag_events``): its clients and store are built
        # here, once, since boto3 does not build clients safely from several threads.

        services = shared_services()
        for service in ("s3", "sqs", "dynamodb"):
            services.client(service)  # type: ignore[call-overload]
        _ = services.store

    def parse(self, event: dict[str, Any]) -> dict[str, Any]:
        return self._call(self._parser, self.names.parser_function, event)

    def asset_events(self, event: dict[str, Any]) -> dict[str, Any]:
        return self._call(self._asset_events, self.names.asset_events_function, event)

    def schedule(self, event: dict[str, Any]) -> Any:
        return self._call(self._scheduler, self.names.scheduler_function, event)

    def api(self, event: dict[str, Any]) -> dict[str, Any]:
        with self._api_turn:
            return self._call(self._api, self.names.api_function, event)

    @staticmethod
    def _call(module: Any, function_name: str, event: dict[str, Any]) -> Any:
        try:
            return module.handler(event, LocalLambdaContext(function_name))
        finally:
            flush_handler_metrics(module)


class MetricsPerThread(MutableMapping[str, Any]):
    """A mapping whose items belong to the thread that reads or writes them: one handler call's metrics,
    dimensions or metadata, never another thread's."""

    def __init__(self) -> None:
        self._local = threading.local()

    @property
    def _items(self) -> dict[str, Any]:
        items: dict[str, Any] | None = getattr(self._local, "items", None)
        if items is None:
            items = self._local.items = {}
        return items

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._items[key] = value

    def __delitem__(self, key: str) -> None:
        del self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)


def keep_metrics_per_thread(metrics: Any) -> None:
    """Give one Powertools ``Metrics`` (and its EMF provider, which its ``log_metrics`` decorator flushes) sets of
    its own, kept per thread. The default dimensions stay shared: they are set once, before any call."""
    sets = {name: MetricsPerThread() for name in ("metric_set", "dimension_set", "metadata_set")}
    for holder in (metrics, metrics.provider):
        for name, per_thread in sets.items():
            setattr(holder, name, per_thread)
