"""``GET /dagStats``: how many runs of each DAG are in each of the four run states (zeros included, as Airflow
lists them). One date-index query per DAG; every DAG when ``dag_ids`` is not given."""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING

from updraft.api.lookups import display_name
from updraft.api.routing import Call, RouteTable
from updraft.model.states import DagRunState

if TYPE_CHECKING:
    from updraft.api.models import DagStatsCollectionResponse, DagStatsResponse

routes = RouteTable()


@routes.get("/dagStats")
def get_dag_stats(call: Call) -> DagStatsCollectionResponse:
    wanted = call.query.strings("dag_ids")
    call.query.check()
    metas = call.store.list_dags()
    if wanted:
        metas = [m for m in metas if m.dag_id in set(wanted)]
    out: list[DagStatsResponse] = []
    for meta in metas:
        counts = collections.Counter(run.state.value for run in call.store.list_runs(meta.dag_id))
        sdag = call.store.get_serialized_dag(meta.dag_id, meta.dag_hash)
        out.append({"dag_id": meta.dag_id, "dag_display_name": display_name(sdag, meta.dag_id),
                    "stats": [{"state": state, "count": counts[state]} for state in DagRunState]})
    return {"dags": out, "total_entries": len(out)}
