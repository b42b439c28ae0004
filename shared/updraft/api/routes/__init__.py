"""Airflow 3's REST routes, one module per resource; each declares a ``routes`` :class:`RouteTable`."""

from __future__ import annotations

import importlib

from updraft.api.routing import Route

MODULES = ("monitor", "version", "auth", "dags", "dag_runs", "task_instances", "pools", "import_errors")


def all_routes() -> list[Route]:
    out: list[Route] = []
    for name in MODULES:
        out += importlib.import_module(f"updraft.api.routes.{name}").routes.routes
    return out
