"""Backfill routes on moto: create and dry-run (Airflow's checks and answers), list, get, pause, unpause, cancel."""

from __future__ import annotations

import datetime as dt

import pytest
from airflow_client.client.models.backfill_collection_response import BackfillCollectionResponse
from airflow_client.client.models.backfill_response import BackfillResponse
from airflow_client.client.models.dry_run_backfill_collection_response import DryRunBackfillCollectionResponse

from updraft.model.records import DagRun
from updraft.model.states import DagRunState
from updraft.scheduling.backfill_pass import drive_backfills
from updraft.scheduling.dag_versions import pinned_dag
from updraft.scheduling.pass_report import PassReport

JAN = "2024-01-0{}T00:00:00Z"


def _body(**over):
    return {"dag_id": "etl", "from_date": JAN.format(1), "to_date": JAN.format(5), **over}


def _create(api, **over):
    return api("POST", "/api/v2/backfills", body=_body(**over))


def _dry(api, **over):
    return api("POST", "/api/v2/backfills/dry_run", body=_body(**over))


def _run(store, day: int, state: DagRunState, run_id: str | None = None) -> None:
    logical = dt.datetime(2024, 1, day, tzinfo=dt.UTC)
    meta = store.get_dag_meta("etl")
    store.create_run(DagRun(dag_id="etl", run_id=run_id or f"scheduled__{logical.isoformat()}", run_type="scheduled",
                            dag_hash=meta.dag_hash, state=state, logical_date=logical, queued_at=logical,
                            start_date=logical))


def test_dry_run_lists_the_dates_in_order(api):
    answer = _dry(api)
    assert answer.status == 200
    assert answer.body == {"total_entries": 5, "backfills": [
        {"logical_date": JAN.format(d), "partition_key": None, "partition_date": None} for d in range(1, 6)]}
    assert DryRunBackfillCollectionResponse.from_dict(answer.body).total_entries == 5  # the official client's model
    backwards = _dry(api, run_backwards=True).body["backfills"]
    assert [b["logical_date"] for b in backwards] == [JAN.format(d) for d in range(5, 0, -1)]


def test_create_get_and_list(api, store):
    answer = _create(api, max_active_runs=2, dag_run_conf={"n": 3})
    assert answer.status == 200
    body = answer.body
    assert {k: v for k, v in body.items() if k not in ("id", "created_at", "updated_at")} == {
        "dag_id": "etl", "from_date": JAN.format(1), "to_date": JAN.format(5), "dag_run_conf": {"n": 3},
        "is_paused": False, "reprocess_behavior": "none", "max_active_runs": 2, "completed_at": None,
        "dag_display_name": "etl"}
    assert isinstance(body["id"], int) and body["created_at"].endswith("Z")
    assert BackfillResponse.from_dict(body).reprocess_behavior == "none"  # the official client's strict model
    assert api.get(f"/api/v2/backfills/{body['id']}").body == body
    listed = api.get("/api/v2/backfills", query={"dag_id": "etl"}).body
    assert listed == {"backfills": [body], "total_entries": 1}
    assert BackfillCollectionResponse.from_dict(listed).total_entries == 1
    assert api.get("/api/v2/backfills", query={"dag_id": "reporting"}).body == {"backfills": [], "total_entries": 0}
    second = _create(api)
    assert second.status == 409 and second.body == {"detail": "There is already a running backfill for dag etl"}


def test_create_refusals_as_airflow_answers_them(api):
    assert _create(api, dag_id="nope").status == 404
    assert _create(api, dag_id="nope").body == {"detail": "Could not find dag nope"}
    assert _dry(api, dag_id="nope").status == 404
    cases = {
        "fanout has a non-periodic schedule that does not support backfills": {"dag_id": "fanout"},
        "from_date (2024-01-05T00:00:00+00:00) must not be after to_date (2024-01-01T00:00:00+00:00).":
            {"from_date": JAN.format(5), "to_date": JAN.format(1)},
        "Backfill cannot be executed for future dates.": {"from_date": "2999-01-01T00:00:00Z",
                                                          "to_date": "2999-01-02T00:00:00Z"},
        "Invalid input for param n": {"dag_run_conf": {"n": -1}},
    }
    for detail, over in cases.items():
        for answer in (_create(api, **over), _dry(api, **over)):
            assert answer.status == 422 and answer.body["detail"].startswith(detail), (over, answer.body)
    empty = _create(api, from_date="2024-01-01T06:00:00Z", to_date="2024-01-01T12:00:00Z")
    assert empty.status == 422 and empty.body["detail"].startswith("No runs to create for Dag etl")
    enum = _create(api, reprocess_behavior="sometimes")
    assert enum.status == 422 and enum.body["detail"][0]["loc"] == ["body", "reprocess_behavior"]
    assert _create(api, max_active_runs=0).status == 422
    assert _create(api, unknown=1).body["detail"][0]["type"] == "extra_forbidden"
    assert _create(api, run_on_latest_version=False).status == 400
    assert api.get("/api/v2/backfills").status == 422  # dag_id is required


def test_existing_runs_are_skipped_or_cleared_by_reprocess_behavior(api, store):
    _run(store, 2, DagRunState.SUCCESS)
    _run(store, 3, DagRunState.FAILED)
    _run(store, 4, DagRunState.RUNNING)

    def dates(**over):
        return [b["logical_date"][8:10] for b in _dry(api, **over).body["backfills"]]

    assert dates() == ["01", "05"]  # none: existing runs stay; in flight ones always do
    assert dates(reprocess_behavior="failed") == ["01", "03", "05"]  # as Airflow: a rerun date is listed
    assert dates(reprocess_behavior="completed") == ["01", "02", "03", "05"]
    with_conf = _dry(api, reprocess_behavior="failed", dag_run_conf={"n": 2})
    assert with_conf.status == 400 and "scheduled__2024-01-03T00:00:00+00:00" in with_conf.body["detail"]
    assert store.get_run("etl", "scheduled__2024-01-03T00:00:00+00:00").state == DagRunState.FAILED  # dry: as is

    created = _create(api)
    assert created.status == 200
    backfill = store.get_backfill(created.body["id"])
    assert backfill.skipped == {"2024-01-02T00:00:00+00:00": "already exists",
                                "2024-01-03T00:00:00+00:00": "already exists",
                                "2024-01-04T00:00:00+00:00": "in flight"}
    assert api("PUT", f"/api/v2/backfills/{backfill.id}/cancel").status == 200

    completed = _create(api, reprocess_behavior="completed")
    assert completed.status == 200
    assert store.get_backfill(completed.body["id"]).skipped == {"2024-01-02T00:00:00+00:00": "cleared",
                                                                "2024-01-03T00:00:00+00:00": "cleared",
                                                                "2024-01-04T00:00:00+00:00": "in flight"}
    for day in (2, 3):  # as Airflow's _handle_clear_run: the existing run is cleared and queued again
        assert store.get_run("etl", f"scheduled__2024-01-0{day}T00:00:00+00:00").state == DagRunState.QUEUED


@pytest.fixture
def tick(store):
    def run_pass():
        report = PassReport()
        drive_backfills(store, lambda d, h: pinned_dag(store, d, h), now=dt.datetime.now(dt.UTC), report=report)
        return report.runs_created
    return run_pass


def test_pause_unpause_and_cancel(api, store, tick):
    backfill_id = _create(api, max_active_runs=2).body["id"]
    paused = api("PUT", f"/api/v2/backfills/{backfill_id}/pause")
    assert paused.status == 200 and paused.body["is_paused"] is True
    assert tick() == []  # a paused backfill creates nothing
    assert api("PUT", f"/api/v2/backfills/{backfill_id}/unpause").body["is_paused"] is False
    assert tick() == ["backfill__2024-01-01T00:00:00+00:00", "backfill__2024-01-02T00:00:00+00:00"]
    assert tick() == []  # max_active_runs=2 are queued
    cancelled = api("PUT", f"/api/v2/backfills/{backfill_id}/cancel")
    assert cancelled.status == 200 and cancelled.body["completed_at"] is not None and cancelled.body["is_paused"]
    assert {r.run_id: r.state for r in store.list_runs("etl")} == {
        "backfill__2024-01-01T00:00:00+00:00": DagRunState.FAILED,
        "backfill__2024-01-02T00:00:00+00:00": DagRunState.FAILED}
    assert tick() == []
    for action in ("pause", "unpause", "cancel"):
        again = api("PUT", f"/api/v2/backfills/{backfill_id}/{action}")
        assert again.status == 409 and again.body == {"detail": "Backfill is already completed."}
    assert _create(api).status == 200  # the DAG is free for another backfill


def test_unknown_and_malformed_ids(api):
    assert api.get("/api/v2/backfills/99").status == 404
    assert api("PUT", "/api/v2/backfills/99/pause").status == 404
    assert api.get("/api/v2/backfills/abc").status == 422
    assert api("PUT", "/api/v2/backfills/-1/cancel").status == 422
    assert api("DELETE", "/api/v2/backfills/1").status == 405
