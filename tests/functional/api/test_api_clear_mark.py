"""The routes that change runs and task instances, on moto: patch (mark, note), delete and clear a run; patch
(mark) a task instance, ``clearTaskInstances``; and the tries routes that list what each try was."""

from __future__ import annotations

import datetime as dt

from tests.functional.scheduling.harness import held_slots
from updraft.limits import Acquired, Claim, Need, acquire
from updraft.model.limits import PARALLELISM_LIMIT, dag_runs_limit, pool_limit
from updraft.model.records import TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.holding import limits_table
from updraft.scheduling.run_slots import start_holding

S = TaskInstanceState
T0 = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
RUNS = "/api/v2/dags/etl/dagRuns"


def _run(api, store, run_id="r1", *, extract=None, load=None, logical_date=None, running=True):
    """An etl run with ``extract`` and ``load`` in the states given (None: untouched); a running run holds its
    max_active_runs slot and a queued or running try its slots, as a start and a claim leave them."""
    answer = api("POST", RUNS, body={"logical_date": logical_date, "dag_run_id": run_id})
    assert answer.status == 200, answer.body
    if running:
        assert isinstance(start_holding(store, store.get_run("etl", run_id), 16, now=T0), Acquired)
    for task_id, state in (("extract", extract), ("load", load)):
        if state is None:
            continue
        key = TIKey("etl", run_id, task_id)
        fields = {"try_number": 1, "try_id": f"try-{task_id}", "pool": "etl_pool" if task_id == "extract" else
                  "default_pool", "start_date": T0, "end_date": None if state == S.RUNNING else T0}
        if state in (S.QUEUED, S.RUNNING):
            store.set_pool("etl_pool", 4)

            def holder(ticket, held, key=key, state=state, fields=fields):
                return store.transition_item(key, expected=[None], state=state, ticket=ticket, held_ticket=held,
                                             fields=fields)

            needs = (Need(pool_limit("etl_pool"), 1, 4), Need(PARALLELISM_LIMIT, 1, 32))
            assert isinstance(acquire(limits_table(store), [Claim(holder, needs)]), Acquired)
        else:
            store.transition_ti(key, expected=[None], state=state, fields=fields)


def test_patch_a_run_sets_its_note_then_marks_it_failed_freeing_its_tries_slots(api, store):
    _run(api, store, extract=S.RUNNING)
    assert held_slots(store, dag_runs_limit("etl")) == 1
    noted = api("PATCH", f"{RUNS}/r1", body={"note": "looked at it"})
    assert noted.status == 200 and (noted.body["note"], noted.body["state"]) == ("looked at it", "running")

    failed = api("PATCH", f"{RUNS}/r1", body={"state": "failed", "note": "ignored"}, query={"update_mask": "state"})
    assert failed.status == 200 and (failed.body["state"], failed.body["note"]) == ("failed", "looked at it")
    states = {ti.task_id: ti.state for ti in store.get_run_tis("etl", "r1")}
    assert states == {"extract": S.FAILED, "load": S.SKIPPED}  # running: the run's state; the rest: skipped
    for limit in (pool_limit("etl_pool"), PARALLELISM_LIMIT, dag_runs_limit("etl")):
        assert held_slots(store, limit) == 0, limit
    # The worker of the try the mark ended reports late: refused by the try-id fence.
    assert not store.end_try(TIKey("etl", "r1", "extract"), try_id="try-extract", state=S.SUCCESS, fields={})

    queued = api("PATCH", f"{RUNS}/r1", body={"state": "queued"})
    assert queued.status == 200 and queued.body["state"] == "queued"
    bad = api("PATCH", f"{RUNS}/r1", body={"state": "running"})
    assert bad.status == 422 and bad.body["detail"][0]["type"] == "enum"
    assert api("PATCH", f"{RUNS}/nope", body={"note": "x"}).status == 404
    assert api("PATCH", f"{RUNS}/r1", body={"color": "red"}).status == 422


def test_delete_a_run_takes_its_instances_tries_and_xcoms_and_refuses_a_running_one(api, store):
    _run(api, store, extract=S.SUCCESS, load=S.RUNNING)
    store.put_xcom(TIKey("etl", "r1", "extract"), "return_value", 42, now=T0)
    store.record_try(store.get_ti(TIKey("etl", "r1", "extract")))
    refused = api("DELETE", f"{RUNS}/r1")
    assert refused.status == 409 and "cannot be deleted in running state" in refused.body["detail"]

    store.set_run_state("etl", "r1", expected=[DagRunState.RUNNING], state=DagRunState.QUEUED, now=T0)
    gone = api("DELETE", f"{RUNS}/r1")
    assert (gone.status, gone.body) == (204, None)
    assert store.get_run("etl", "r1") is None and store.get_run_tis("etl", "r1") == []
    assert store.get_xcom(TIKey("etl", "r1", "extract"), "return_value") is None
    assert store.get_tries(TIKey("etl", "r1", "extract")) == []
    # The running try (a run set back to queued keeps it) gave its slots back with the run.
    assert held_slots(store, pool_limit("etl_pool")) == 0
    assert api("DELETE", f"{RUNS}/r1").status == 404


def test_clear_a_run_lists_by_default_then_resets_and_requeues_it(api, store):
    _run(api, store, extract=S.SUCCESS, load=S.FAILED)
    store.set_run_state("etl", "r1", expected=[DagRunState.RUNNING], state=DagRunState.FAILED, now=T0)
    dry = api("POST", f"{RUNS}/r1/clear", body={})
    assert dry.status == 200 and dry.body["total_entries"] == 2  # dry_run is true unless said otherwise
    assert store.get_ti(TIKey("etl", "r1", "load")).state == S.FAILED
    only_failed = api("POST", f"{RUNS}/r1/clear", body={"only_failed": True})
    assert [t["task_id"] for t in only_failed.body["task_instances"]] == ["load"]

    cleared = api("POST", f"{RUNS}/r1/clear", body={"dry_run": False, "only_failed": True, "note": "retry it"})
    assert cleared.status == 200 and (cleared.body["state"], cleared.body["note"]) == ("queued", "retry it")
    load = store.get_ti(TIKey("etl", "r1", "load"))
    assert (load.state, load.try_number, load.max_tries) == (None, 1, 1 + 2)  # load has retries=2
    assert store.get_ti(TIKey("etl", "r1", "extract")).state == S.SUCCESS
    assert api("POST", f"{RUNS}/r1/clear", body={"only_new": True}).status == 400
    assert api("POST", f"{RUNS}/r1/clear", body={"only_new": True, "only_failed": True}).status == 422

    tries = api.get(f"{RUNS}/r1/taskInstances/load/tries")
    assert tries.status == 200 and [(t["try_number"], t["state"]) for t in tries.body["task_instances"]] == [
        (1, "failed"), (1, None)]  # the recorded try, then the instance (Airflow lists both after a clear)
    assert "id" not in tries.body["task_instances"][0] and tries.body["task_instances"][0]["max_tries"] == 2
    one = api.get(f"{RUNS}/r1/taskInstances/load/tries/1")
    assert one.status == 200 and one.body["state"] is None  # the instance first, as Airflow reads it
    assert api.get(f"{RUNS}/r1/taskInstances/load/tries/7").status == 404
    assert api.get(f"{RUNS}/r1/taskInstances/load/-1/tries").body["total_entries"] == 2
    assert api.get(f"{RUNS}/r1/taskInstances/load/-1/tries/1").status == 200


def test_patch_a_task_instance_marks_it_and_clears_its_failed_downstream(api, store):
    _run(api, store, extract=S.FAILED, load=S.UPSTREAM_FAILED)
    store.set_run_state("etl", "r1", expected=[DagRunState.RUNNING], state=DagRunState.FAILED, now=T0)
    path = f"{RUNS}/r1/taskInstances/extract"
    dry = api("PATCH", f"{path}/dry_run", body={"new_state": "success", "include_downstream": True})
    assert dry.status == 200 and sorted(t["task_id"] for t in dry.body["task_instances"]) == ["extract", "load"]
    assert store.get_ti(TIKey("etl", "r1", "extract")).state == S.FAILED

    marked = api("PATCH", path, body={"new_state": "SUCCESS", "note": "fixed by hand"})
    assert marked.status == 200 and marked.body["total_entries"] == 1
    assert (marked.body["task_instances"][0]["state"], marked.body["task_instances"][0]["note"]) == (
        "success", "fixed by hand")
    # As Airflow: the failed downstream is cleared so the run goes on, and the finished run is queued again.
    assert store.get_ti(TIKey("etl", "r1", "load")).state is None
    assert store.get_run("etl", "r1").state == DagRunState.QUEUED
    again = api("PATCH", path, body={"new_state": "success"})
    assert again.status == 409 and again.body["detail"] == "Task id extract is already in success state"
    assert api("PATCH", path, body={"new_state": "running"}).status == 422
    assert api("PATCH", f"{RUNS}/r1/taskInstances/nope", body={"new_state": "failed"}).status == 404
    skipped = api("PATCH", f"{RUNS}/r1/taskInstances/load/-1", body={"new_state": "skipped"})
    assert skipped.status == 200 and skipped.body["task_instances"][0]["state"] == "skipped"


def test_clear_task_instances_by_task_with_downstream_in_one_run_or_a_date_range(api, store):
    _run(api, store, "r1", extract=S.FAILED, load=S.UPSTREAM_FAILED, logical_date="2024-02-01T00:00:00Z")
    _run(api, store, "r2", extract=S.RUNNING, load=None, logical_date="2024-02-02T00:00:00Z")
    url = "/api/v2/dags/etl/clearTaskInstances"
    dry = api("POST", url, body={"task_ids": ["extract"], "dag_run_id": "r1", "include_downstream": True})
    assert dry.status == 200 and sorted(t["task_id"] for t in dry.body["task_instances"]) == ["extract", "load"]
    assert store.get_ti(TIKey("etl", "r1", "extract")).state == S.FAILED  # dry_run is the default

    refused = api("POST", url, body={"dry_run": False, "only_failed": False, "only_running": True,
                                     "prevent_running_task": True})
    assert refused.status == 409 and store.get_ti(TIKey("etl", "r2", "extract")).state == S.RUNNING
    running = api("POST", url, body={"dry_run": False, "only_failed": False, "only_running": True,
                                     "start_date": "2024-02-02T00:00:00Z"})
    assert [(t["dag_run_id"], t["task_id"], t["state"]) for t in running.body["task_instances"]] == [
        ("r2", "extract", None)]
    assert held_slots(store, pool_limit("etl_pool")) == 0  # the cleared running try's slots went back

    failed = api("POST", url, body={"dry_run": False, "task_ids": [["extract", -1]], "include_downstream": True})
    assert sorted((t["dag_run_id"], t["task_id"]) for t in failed.body["task_instances"]) == [
        ("r1", "extract"), ("r1", "load")]
    assert store.get_ti(TIKey("etl", "r1", "load")).state is None

    checks = [({"only_failed": True, "only_running": True}, 422), ({"task_ids": []}, 422),
              ({"dag_run_id": "r1", "start_date": "2024-02-02T00:00:00Z"}, 422), ({"dag_run_id": "nope"}, 404),
              ({"run_on_latest_version": True}, 400), ({"task_ids": [1]}, 422)]
    for body, status in checks:
        assert api("POST", url, body=body).status == status, body
