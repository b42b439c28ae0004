"""What runs, DAGs and the environment cost, in dollars: Updraft's own routes, under ``/api/updraft`` (apart from
Airflow's ``/api/v2``, so Airflow's strict clients never meet them; ``updraft.cost`` computes the figures).

- ``GET /api/updraft/dags/{dag_id}/dagRuns/{dag_run_id}/cost``: the run's breakdown (its tries' recorded usage
  priced, and the scheduling overhead, estimated); 404 for a run that does not exist.
- ``GET /api/updraft/dags/{dag_id}/runCosts?dag_run_id=...`` (repeated, at most ``MAX_RUNS``): each run's total,
  for a list of runs (``updraft runs list``'s cost column); a run that does not exist is left out.
- ``GET /api/updraft/dags/{dag_id}/cost?days=N``: the DAG's cost per day (UTC) for the last N days (1-31, 7 by
  default), from its newest runs.
- ``GET /api/updraft/cost/idle``: the environment's idle cost per month, and what makes it up.

Reads only: a VIEWER may call them (``api.auth.policy``: a DAG's costs as its runs, the environment's as a view).
"""

from __future__ import annotations

from typing import Any

from updraft.api.errors import BadRequest, NotFound
from updraft.api.routing import UPDRAFT_API_PREFIX, Call, RouteTable

routes = RouteTable(prefix=UPDRAFT_API_PREFIX)

MAX_RUNS = 100
MAX_DAYS = 31


def _region(call: Call) -> str | None:
    region: str | None = call.services.config.region
    return region


@routes.get("/dags/{dag_id}/dagRuns/{dag_run_id}/cost")
def run_cost(call: Call) -> dict[str, Any]:
    # lazy: cold start (the API's build imports every route module; cost models only on this route)
    from updraft.cost.runs import run_cost as cost_of

    dag_id, run_id = call.path("dag_id"), call.path("dag_run_id")
    if call.store.get_run(dag_id, run_id) is None:
        raise NotFound(f"The DagRun with dag_id: `{dag_id}` and run_id: `{run_id}` was not found")
    return cost_of(call.store, dag_id, run_id, region=_region(call)).to_json()


@routes.get("/dags/{dag_id}/runCosts")
def run_costs(call: Call) -> dict[str, Any]:
    # lazy: cold start (the API's build imports every route module; cost models only on this route)
    from updraft.cost.runs import run_cost as cost_of

    dag_id = call.path("dag_id")
    run_ids = call.query.strings("dag_run_id")
    if len(run_ids) > MAX_RUNS:
        raise BadRequest(f"at most {MAX_RUNS} dag_run_id values at once, got {len(run_ids)}")
    found = []
    for run_id in dict.fromkeys(run_ids):
        if call.store.get_run(dag_id, run_id) is not None:
            cost = cost_of(call.store, dag_id, run_id, region=_region(call))
            found.append({"dag_run_id": run_id, "usd": cost.usd, "unmetered_tries": cost.unmetered})
    return {"dag_id": dag_id, "dag_runs": found}


@routes.get("/dags/{dag_id}/cost")
def dag_cost(call: Call) -> dict[str, Any]:
    # lazy: cold start (the API's build imports every route module; cost models only on this route)
    from updraft.cost.runs import daily_costs

    dag_id = call.path("dag_id")
    days = call.query.integer("days", 7, ge=1)
    if days > MAX_DAYS:
        raise BadRequest(f"days must be at most {MAX_DAYS}, got {days}")
    if call.store.get_dag_meta(dag_id) is None:
        raise NotFound(f"The Dag with ID: `{dag_id}` was not found")
    per_day = daily_costs(call.store, dag_id, days=days, today=call.now().date(), region=_region(call))
    return {"dag_id": dag_id, "days": per_day, "usd": sum(d["usd"] for d in per_day)}


@routes.get("/cost/idle")
def idle(call: Call) -> dict[str, Any]:
    # lazy: cold start (the API's build imports every route module; cost models only on this route)
    from updraft.cost.idle import IdleInputs, idle_cost

    config = call.services.config
    name = config.metrics_namespace.rsplit("/", 1)[-1]  # "Updraft/<environment>" on AWS
    return idle_cost(IdleInputs.of_config(config, name))
