"""``GET /dags/{dag_id}/grid``: what the web UI's grid draws for one page of a DAG's runs, in one answer.

Airflow's UI asks its private ``/ui/grid/...`` routes for the runs and their task instances' states together
(one request, not one per run); this is that answer for Updraft's grid, served under ``/api/v2`` as
``connections/hook_meta`` is (``/ui/`` is the web UI's session: :mod:`updraft.api.auth.session`), with the
role any read of the DAG needs. So a grid page costs the same number of requests whatever the run count.

- ``limit`` (1-365, default 25) runs, newest first by ``run_after`` (the date index: the store reads only
  ``offset + limit + 1`` runs, never the DAG's whole history), skipping ``offset``; ``has_more`` says whether
  older runs are left (no total: counting every run would read every run).
- ``run_id`` (optional): that run too when it is not on the page (the run page's run, however old).
- ``task_instances``: for each listed run, its stored instances, slim (what a cell, a tooltip, a duration bar
  and the run page's task table show; the full instance is ``/taskInstances``). A task with no instance yet
  has none here: the grid draws it without a state.

How the instances are read: for a DAG with no mapped task (nor task of a mapped group) every instance's key is
known, so the page's are read by key, a hundred a BatchGetItem, the batches at once (``get_run_meta_and_tis``:
25 runs of 16 tasks are 5 requests); otherwise one query of each run's partition (map indexes are not known
ahead), a few at a time. By key rather than by query because a query's cost grows with the whole table on the
embedded AWS local mode runs on (moto reads every item of the table for each query), while a get by key does not:
at 10,000 runs a page's 25 queries took seconds there. On DynamoDB both are a few round trips; the gets cost one
read unit an instance (a query, one per 4 KB read): a few hundred units a page at most.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from updraft.api.formats import iso, seconds_between
from updraft.api.lookups import dag_or_404, display_name, run_or_404
from updraft.api.routes.dag_runs import run_response
from updraft.api.routing import Call, RouteTable
from updraft.model.records import TIKey

routes = RouteTable()

DEFAULT_RUNS = 25
MAX_RUNS = 365  # the largest of Airflow's grid run-count choices
PARALLEL_QUERIES = 8  # reads in flight at once
KEYS_PER_READ = 98  # instances per BatchGetItem: with the run's and the DAG's rows, DynamoDB's 100


def slim_instance(ti: Any) -> dict[str, Any]:
    """One instance as a grid cell and the run page's task table need it."""
    return {"task_id": ti.task_id, "map_index": ti.map_index, "state": ti.state.value if ti.state else None,
            "try_number": ti.try_number, "start_date": iso(ti.start_date), "end_date": iso(ti.end_date),
            "duration": seconds_between(ti.start_date, ti.end_date), "executor": ti.executor}


@routes.get("/dags/{dag_id}/grid")
def get_grid(call: Call) -> dict[str, Any]:
    q = call.query
    limit = min(q.integer("limit", DEFAULT_RUNS, ge=1), MAX_RUNS)
    offset = q.integer("offset", 0, ge=0)
    run_id = q.string("run_id")
    q.check()
    dag_id = call.path("dag_id")
    _, sdag = dag_or_404(call, dag_id)
    newest = call.store.list_runs(dag_id, limit=offset + limit + 1)
    runs = newest[offset:offset + limit]
    if run_id and all(run.run_id != run_id for run in runs):
        runs.append(run_or_404(call, dag_id, run_id))
    name = display_name(sdag, dag_id)
    tasks = list(getattr(sdag, "tasks", []))
    with ThreadPoolExecutor(max_workers=PARALLEL_QUERIES) as pool:
        if runs and not any(task.is_mapped for task in tasks):
            wanted = [TIKey(dag_id, run.run_id, task.task_id) for run in runs for task in tasks]
            found: dict[TIKey, Any] = {}
            # One BatchGetItem per hundred keys, all in flight at once (the run and DAG rows ride along).
            for read in pool.map(lambda at: call.store.get_run_meta_and_tis(
                    dag_id, runs[0].run_id, wanted[at:at + KEYS_PER_READ], ends=False)[2],
                    range(0, len(wanted), KEYS_PER_READ)):
                found.update(read)
            lists = [[found[key] for key in wanted if key.run_id == run.run_id and key in found] for run in runs]
        else:
            lists = list(pool.map(lambda run: call.store.get_run_tis(dag_id, run.run_id), runs))
    return {
        "dag_runs": [run_response(run, name) for run in runs],
        "task_instances": {run.run_id: [slim_instance(ti) for ti in tis] for run, tis in zip(runs, lists, strict=True)},
        "has_more": len(newest) > offset + limit,
    }
