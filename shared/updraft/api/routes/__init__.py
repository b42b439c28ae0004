"""Airflow 3's REST routes, one module per resource (and Updraft's own, under ``/api/updraft``); each declares a
``routes`` :class:`RouteTable`."""

from __future__ import annotations

import importlib

from updraft.api.routing import Route

# Matched in this order: routes with a fixed segment (``.../{task_id}/xcomEntries``, ``.../dependencies``) come
# before task_instances' ``.../{task_id}/{map_index}``, which would otherwise take that segment for a map index.
MODULES = ("monitor", "version", "auth", "assets", "grid", "dags", "dag_sources", "event_logs", "dag_runs", "dag_stats",
           "xcom_entries", "task_logs", "task_dependencies", "task_instance_tries", "task_instance_marks",
           "task_instance_clears", "task_instance_links", "state_stores", "hitl", "task_instances", "pools",
           "import_errors", "variables", "connections", "providers", "plugins", "config", "backfills", "metrics",
           "openapi", "session", "costs", "ui_views", "ui")


def all_routes() -> list[Route]:
    out: list[Route] = []
    for name in MODULES:
        out += importlib.import_module(f"updraft.api.routes.{name}").routes.routes
    return out
