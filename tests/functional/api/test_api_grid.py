"""``GET /api/v2/dags/{dag_id}/grid``: a page of runs and their task instances' states in one answer, newest first,
paged by ``limit``/``offset`` with ``has_more``, the named run added when it is older than the page."""

from __future__ import annotations

import pytest

from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState


def _runs(api, store, count: int) -> list[str]:
    ids = []
    for day in range(1, count + 1):
        run_id = f"r{day}"
        answer = api("POST", "/api/v2/dags/etl/dagRuns",
                     body={"dag_run_id": run_id, "logical_date": f"2024-02-{day:02d}T00:00:00Z"})
        assert answer.status == 200, answer.body
        store.create_ti(TIKey("etl", run_id, "extract"), state=TaskInstanceState.SUCCESS, fields={"try_number": 1})
        ids.append(run_id)
    return ids


@pytest.mark.slow
def test_one_answer_holds_a_page_of_runs_and_every_instance_of_each(api, store):
    _runs(api, store, 5)
    first = api.get("/api/v2/dags/etl/grid", query={"limit": 2})
    assert first.status == 200
    assert [r["dag_run_id"] for r in first.body["dag_runs"]] == ["r5", "r4"] and first.body["has_more"] is True
    assert set(first.body["task_instances"]) == {"r5", "r4"}
    (ti,) = first.body["task_instances"]["r5"]
    assert {k: ti[k] for k in ("task_id", "map_index", "state", "try_number")} == {
        "task_id": "extract", "map_index": -1, "state": "success", "try_number": 1}
    assert first.body["dag_runs"][0]["run_type"] == "manual"  # each run as the runs list answers it

    last = api.get("/api/v2/dags/etl/grid", query={"limit": 2, "offset": 4})
    assert [r["dag_run_id"] for r in last.body["dag_runs"]] == ["r1"] and last.body["has_more"] is False
    # The run page's run, older than the page, comes too.
    named = api.get("/api/v2/dags/etl/grid", query={"limit": 1, "run_id": "r2"})
    assert [r["dag_run_id"] for r in named.body["dag_runs"]] == ["r5", "r2"]
    assert named.body["task_instances"]["r2"][0]["state"] == "success"
    assert api.get("/api/v2/dags/etl/grid", query={"limit": 1000}).body["has_more"] is False  # capped, not refused


def test_the_grid_refuses_what_the_runs_list_refuses(api, store):
    assert api.get("/api/v2/dags/nope/grid").status == 404
    assert api.get("/api/v2/dags/etl/grid", query={"run_id": "nope"}).status == 404
    assert api.get("/api/v2/dags/etl/grid", query={"limit": 0}).status == 422


def test_a_mapped_tasks_instances_are_all_in_the_answer(api, store):
    """A DAG with a mapped task: its instances' map indexes are not known ahead, so each is there all the same."""
    assert api("POST", "/api/v2/dags/fanout/dagRuns", body={"dag_run_id": "m", "logical_date": None}).status == 200
    for index in range(3):
        store.create_ti(TIKey("fanout", "m", "double", index), state=TaskInstanceState.SUCCESS)
    found = api.get("/api/v2/dags/fanout/grid").body["task_instances"]["m"]
    assert sorted(ti["map_index"] for ti in found) == [0, 1, 2]
