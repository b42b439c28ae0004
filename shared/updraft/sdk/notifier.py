"""``BaseNotifier``: a callback object that renders its template fields and then sends something, as Airflow's.

A notifier is passed where a callback goes (``on_failure_callback=MyNotifier(...)``, on a task or a DAG). Called
with the context it merges its template fields into the context, renders them with the DAG's Jinja environment
(the task runtime does the rendering: ``updraft.sdk.execution.render_template_fields``) and calls ``notify``.
Airflow's legacy four-argument call (the SLA miss callback) builds the same context keys. ``async_notify`` is
Airflow's hook for the triggerer (deadline alerts); Updraft calls notifiers synchronously only.

Rendering is irreversible, and a warm worker keeps the imported DAG (and its notifiers) for the next run, where
Airflow runs each callback in a fresh process; so each call renders and notifies on a copy whose template fields
are deep-copied, and the notifier the DAG holds keeps its templates.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from typing import Any

from updraft.sdk.context import Context
from updraft.sdk.execution import render_template_fields


class BaseNotifier:
    template_fields: Sequence[str] = ()
    template_ext: Sequence[str] = ()

    def __init__(self, context: Context | None = None) -> None:
        self.context: Any = context or {}

    @property
    def log(self) -> logging.Logger:
        cls = type(self)
        return logging.getLogger(f"airflow.task.notifiers.{cls.__module__}.{cls.__name__}")

    def _update_context(self, context: Any) -> Any:
        """The notifier's template fields become context keys too, as in Airflow (``context_merge``)."""
        context.update((name, getattr(self, name)) for name in self.template_fields)
        return context

    def render_template_fields(self, context: Any, jinja_env: Any = None) -> None:
        """Render every template field in place (irreversible, as in Airflow); ``jinja_env`` is not supported
        (the DAG's environment is used) and refused rather than ignored."""
        if jinja_env is not None:
            raise TypeError("render_template_fields(jinja_env=...) is not supported by Updraft; the DAG's Jinja "
                            "environment is used")
        render_template_fields(self, context)

    def _fresh(self) -> BaseNotifier:
        fresh = copy.copy(self)
        for name in self.template_fields:
            if hasattr(self, name):
                setattr(fresh, name, copy.deepcopy(getattr(self, name)))
        return fresh

    async def async_notify(self, context: Any) -> None:
        raise NotImplementedError

    def notify(self, context: Any) -> None:
        raise NotImplementedError

    def __call__(self, *args: Any) -> None:
        if len(args) == 1:
            context = args[0]
        else:
            context = {"dag": args[0], "task_list": args[1], "blocking_task_list": args[2],
                       "blocking_tis": args[3]}
        notifier = self._fresh()
        notifier._update_context(context)
        notifier.render_template_fields(context)
        try:
            notifier.notify(context)
        except Exception as exc:
            self.log.error("Failed to send notification (sync): %s", exc)
            raise
