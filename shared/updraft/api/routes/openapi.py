"""``GET /openapi.json``, where Airflow's FastAPI app serves it: the OpenAPI document of the routes this API
serves (:mod:`updraft.api.openapi`), built once per process."""

from __future__ import annotations

import functools
from typing import Any

from updraft.api.openapi import DOCUMENT_PATH, document
from updraft.api.routes import all_routes
from updraft.api.routing import Call, RouteTable

routes = RouteTable(prefix="")


@functools.cache
def served_document() -> dict[str, Any]:
    return document(all_routes())


@routes.get(DOCUMENT_PATH)
def get_openapi(_call: Call) -> dict[str, Any]:
    return served_document()
