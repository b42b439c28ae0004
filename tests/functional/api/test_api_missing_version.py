"""A run pinned to a DAG version the store no longer has: marking or clearing it has no tasks to act on, so the
API answers the DAG's 404 (``lookups.run_version_or_404``) and changes nothing."""

from __future__ import annotations

import datetime as dt

from updraft.model.records import DagRun
from updraft.model.states import DagRunState

RUNS = "/api/v2/dags/etl/dagRuns"
T0 = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)


def test_marking_or_clearing_a_run_whose_version_is_gone_is_the_dags_404(api, store):
    assert store.create_run(DagRun(dag_id="etl", run_id="orphan", run_type="manual", dag_hash="no-such-version",
                                   state=DagRunState.RUNNING, logical_date=T0, start_date=T0))
    for method, path, body in (("PATCH", f"{RUNS}/orphan", {"state": "failed"}),
                               ("POST", f"{RUNS}/orphan/clear", {"dry_run": True})):
        answer = api(method, path, body=body)
        assert (answer.status, answer.body["detail"]) == (404, "Dag with dag_id: 'etl' not found"), (path, answer.body)
    assert store.get_run("etl", "orphan").state == DagRunState.RUNNING
