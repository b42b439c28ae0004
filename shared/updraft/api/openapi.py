"""The OpenAPI document Updraft serves: Airflow's own operations, for exactly the routes Updraft has.

Routes are data (:mod:`updraft.api.routing`), so the document is cut from Airflow 3.3.2's (``airflow_openapi.json.gz``
beside this module, rebuilt by ``bench/refresh_airflow_openapi.py``): each served (method, path) gets Airflow's
operation object unchanged, and ``components`` keeps only the schemas and security schemes those operations
reference. The document is a subset of Airflow's by construction; clients generated from Airflow's document,
and tools such as schemathesis, read it as they read Airflow's.

Routes Airflow's documents do not have are listed in :data:`NOT_IN_AIRFLOW` with the reason, and left out of
the document (a test keeps every other route inside Airflow's). The data file is read on the first request
for the document, never at import: the API Lambda's cold start does not pay for it.
"""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from updraft.api.auth.policy import is_ui_path
from updraft.api.routing import Route

AIRFLOW_DOCUMENT = Path(__file__).with_name("airflow_openapi.json.gz")
DOCUMENT_PATH = "/openapi.json"  # where Airflow's FastAPI app serves its document (not under /api/v2)

# Routes Updraft serves that are not in Airflow's documents: (method, path) -> why.
NOT_IN_AIRFLOW = {
    ("GET", "/api/updraft/metrics"): "Airflow's metrics as local mode wrote them, for the web UI: Airflow sends its "
                                     "metrics to StatsD or OpenTelemetry and serves none (updraft.api.routes.metrics)",
    ("GET", DOCUMENT_PATH): "the document itself: Airflow's FastAPI app serves /openapi.json outside the "
                            "document it describes, and so does Updraft",
    ("POST", "/ui/session"): "the web UI's sign-in: the token goes into an HttpOnly cookie the page cannot read, "
                             "where Airflow's UI keeps it in script (updraft.api.auth.session)",
    ("GET", "/ui/session"): "who the web UI's cookie signs in, since the page cannot read the cookie's token "
                            "(updraft.api.auth.session)",
    ("DELETE", "/ui/session"): "the web UI's sign-out: clears the HttpOnly cookie, which only the server can "
                               "(updraft.api.auth.session)",
    **{("GET", "/api/updraft" + path): "Updraft's costs (updraft.api.routes.costs): no Airflow route says what a "
                                        "run costs; under /api/updraft, apart from Airflow's /api/v2"
       for path in ("/dags/{dag_id}/dagRuns/{dag_run_id}/cost", "/dags/{dag_id}/runCosts", "/dags/{dag_id}/cost",
                    "/cost/idle")},
    ("GET", "/api/v2/connections/hook_meta"): "the connection form's types: Airflow's private UI route "
                                              "GET /ui/connections/hook_meta, outside its documents, served under "
                                              "/api/v2 since /ui/ is the web UI's session "
                                              "(updraft.api.routes.connections)",
    **{("GET", "/api/v2" + path): f"a web UI view's data: Airflow's private UI route GET {path}, outside its "
                                  "documents, served under /api/v2 since /ui/ is the web UI's session "
                                  "(updraft.api.routes.ui_views)"
       for path in ("/ui/dashboard/historical_metrics_data", "/ui/calendar/{dag_id}", "/ui/gantt/{dag_id}/{run_id}")},
}

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
REF_PREFIX = "#/components/"


@functools.cache
def airflow_document() -> dict[str, Any]:
    """Airflow's documents (public REST API and simple auth manager) merged, as shipped with the package."""
    return json.loads(gzip.decompress(AIRFLOW_DOCUMENT.read_bytes()))


def airflow_operation(method: str, path: str) -> dict[str, Any] | None:
    """Airflow's operation object for ``method path`` (Airflow's template, e.g. ``/api/v2/dags/{dag_id}``)."""
    return airflow_document()["paths"].get(path, {}).get(method.lower())


def airflow_routes() -> list[tuple[str, str]]:
    """Every (METHOD, path) Airflow's documents declare."""
    return [(method.upper(), path) for path, item in airflow_document()["paths"].items()
            for method in item if method in METHODS]


def _refs(node: Any) -> Iterator[str]:
    """Every ``$ref`` under ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _components(operations: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The components the operations reference, followed transitively, plus the security schemes they name."""
    source = airflow_document()["components"]
    out: dict[str, dict[str, Any]] = {}
    pending = [ref for op in operations for ref in _refs(op)]
    while pending:
        ref = pending.pop()
        section, name = ref.removeprefix(REF_PREFIX).split("/", 1)
        if name in out.get(section, {}):
            continue
        value = source[section][name]
        out.setdefault(section, {})[name] = value
        pending += _refs(value)
    schemes = {name for op in operations for requirement in op.get("security", []) for name in requirement}
    if schemes:
        out["securitySchemes"] = {name: source["securitySchemes"][name] for name in sorted(schemes)}
    return {section: dict(sorted(entries.items())) for section, entries in sorted(out.items())}


def api_routes(routes: Iterable[Route]) -> list[Route]:
    """The REST API's routes: not the web UI's pages and assets, which no OpenAPI document describes (Airflow's
    documents neither)."""
    return [route for route in routes if not is_ui_path(route.path)]


def document(routes: Iterable[Route]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``routes``' API routes: Airflow's operation for each, in Airflow's path order."""
    served = {(route.method, route.path) for route in api_routes(routes)} - set(NOT_IN_AIRFLOW)
    source = airflow_document()
    paths: dict[str, dict[str, Any]] = {}
    for path, item in source["paths"].items():
        kept = {method: op for method, op in item.items() if (method.upper(), path) in served}
        if kept:
            paths[path] = kept
    operations = [op for item in paths.values() for op in item.values()]
    info = dict(source["info"], title="Updraft (Airflow API)",
                description="The part of Airflow 3's REST API that Updraft serves, with Airflow's own operation "
                            "schemas.\n\n" + source["info"].get("description", ""))
    return {"openapi": source["openapi"], "info": info, "paths": paths, "components": _components(operations)}
