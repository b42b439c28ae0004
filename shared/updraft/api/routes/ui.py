"""The web UI's pages and assets (:mod:`updraft.ui`), on Airflow 3's UI paths beside the API's ``/api/v2``.

Every page path answers the same app shell (the browser's JavaScript reads the path and draws the page), so a
URL copied from the address bar opens the same page. Assets live at ``/static/<version>/<file>``: the version is
a digest of the files, so they are cached as immutable; the shell itself is never cached, so a new release is
picked up on the next load. Nothing here touches the store, and importing it costs only the standard library.
Registered last in :data:`updraft.api.routes.MODULES`, so no API route is ever shadowed.

A browser asking for a path no page or route has (``Accept: text/html``: a link to an Airflow page Updraft
lacks, a mistyped URL) gets the shell too, with status 404 (:func:`missing_page`): the app draws its own
"page not found" inside the UI instead of the API's JSON 404, which clients other than browsers still get.

Every route here is public: the shell and the assets hold no data (the page reads everything through
``/api/v2`` with the signed-in user's token), and a browser navigating to a page cannot send a bearer header, so
an authorizer in front of these paths would keep even the login page from loading.
"""

from __future__ import annotations

from updraft.api.routing import Call, Reply, RouteTable
from updraft.ui import assets

routes = RouteTable(prefix="")

IMMUTABLE = "public, max-age=31536000, immutable"
# Airflow 3's UI paths that Updraft draws (its router's paths, and the simple auth manager's login page).
PAGES = ("/", "/dags", "/dags/{dag_id}", "/dags/{dag_id}/runs/{run_id}", "/dags/{dag_id}/runs/{run_id}/tasks/{task_id}",
         "/dags/{dag_id}/runs/{run_id}/tasks/{task_id}/mapped/{map_index}", "/pools", "/variables", "/connections",
         "/events", "/auth/login",
         # The views of updraft.ui's views modules: the DAG's tabs, a task across runs, a run's Gantt (Updraft's
         # path: Airflow draws it in the DAG page's panel), a task group in a run and across runs, the Browse
         # lists, assets, providers, plugins, config and jobs; the required actions (human-in-the-loop requests)
         # across DAGs, of a DAG and of a run; a task instance's Required Action, XCom and Rendered Templates tabs
         # (its page); a mapped task's list of instances.
         *(f"/dags/{{dag_id}}/{tab}" for tab in ("runs", "tasks", "calendar", "backfills", "events", "code",
                                                  "details")),
         "/dags/{dag_id}/tasks/{task_id}", "/dags/{dag_id}/tasks/group/{group_id}",
         "/dags/{dag_id}/runs/{run_id}/tasks/group/{group_id}", "/dags/{dag_id}/runs/{run_id}/gantt", "/dag_runs",
         "/task_instances", "/xcoms", "/assets", "/assets/{asset_id}", "/providers", "/plugins", "/configs", "/jobs",
         "/required_actions", "/dags/{dag_id}/required_actions", "/dags/{dag_id}/runs/{run_id}/required_actions",
         "/dags/{dag_id}/runs/{run_id}/tasks/{task_id}/mapped",
         *(f"/dags/{{dag_id}}/runs/{{run_id}}/tasks/{{task_id}}{mapped}/{part}"
           for part in ("required_actions", "xcom", "rendered_templates") for mapped in ("", "/mapped/{map_index}")))


def _base(path: str) -> str:
    """The page's way back to the UI's root as a relative URL (``../..``) from how deep its path is."""
    depth = path.count("/") - 1
    return "/".join([".."] * depth) if depth > 0 else "."


def _shell(path: str, status: int) -> Reply:
    return Reply(status, assets.shell(_base(path)), content_type=assets.content_type(assets.SHELL),
                 headers={"Cache-Control": "no-cache"})


def page(call: Call) -> Reply:
    return _shell(call.request.path, 200)


def wants_page(method: str, path: str, accept: str | None) -> bool:
    """A browser navigating (a GET that accepts HTML) to a path outside the API (``/api/...``, ``/ui/...``)."""
    return method == "GET" and "text/html" in (accept or "") and not path.startswith(("/api/", "/ui/"))


def missing_page(path: str) -> Reply:
    """The app shell with status 404 for a path no page has: the UI shows its in-app 404 page."""
    return _shell(path, 404)


for _path in PAGES:
    routes.get(_path)(page)


@routes.get("/static/{version}/{name}")
def static_file(call: Call) -> Reply:
    """One asset; an old version's URL (a page loaded before a deploy) gets today's file, not cached."""
    name = call.path("name")
    text = assets.asset(name)
    kind = assets.content_type(name)
    if text is None or kind is None or name == assets.SHELL:
        return Reply(404, "Not Found", content_type="text/plain; charset=utf-8")
    current = call.path("version") == assets.version()
    return Reply(200, text, content_type=kind, headers={"Cache-Control": IMMUTABLE if current else "no-cache"})
