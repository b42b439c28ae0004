"""``GET /openapi.json`` (where Airflow's FastAPI app serves it) and ``GET /api/v2/openapi.json``: the OpenAPI
document of the routes this API serves (:mod:`updraft.api.openapi`), built once per process."""

from __future__ import annotations

import functools
from typing import Any

from updraft.api.openapi import DOCUMENT_PATHS, document
from updraft.api.routing import Call, RouteTable

routes = RouteTable(prefix="")


@functools.cache
def served_document() -> dict[str, Any]:
    from updraft.api.routes import all_routes

    return document(all_routes())


def get_openapi(_call: Call) -> dict[str, Any]:
    return served_document()


for _path in DOCUMENT_PATHS:
    routes.get(_path)(get_openapi)
