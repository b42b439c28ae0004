"""Human-in-the-loop requests through the REST API (``hitlDetails``): listed and read as Airflow's ``HITLDetail``,
answered with PATCH as Airflow checks it (400, 403, 409, 422), and a response resumes the deferred try at once."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.functional.lambda_helpers import lambda_context
from updraft.local.api_gateway import proxy_event
from updraft.model import hitl
from updraft.model.records import TIKey
from updraft.model.states import DagRunState, TaskInstanceState

T0 = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
RUNS = "/api/v2/dags/etl/dagRuns"
TRIGGER = {"classpath": hitl.CLASSPATH, "kwargs": {}, "kind": "wait", "resume_at": "9999-01-01T00:00:00+00:00",
           "times_out": False, "event": None, "end_from_trigger": False, "created_at": T0.isoformat(),
           "timeout_at": None}


def _asking(api, store, run_id: str, *, multiple: bool = False, assigned: list | None = None) -> TIKey:
    """A run whose ``extract`` deferred asking to choose among a, b and c (a param ``n`` to fill)."""
    assert api("POST", RUNS, body={"logical_date": None, "dag_run_id": run_id}).status == 200
    store.set_run_state("etl", run_id, expected=[DagRunState.QUEUED], state=DagRunState.RUNNING, now=T0)
    key = TIKey("etl", run_id, "extract")
    request = hitl.request_record({"options": ["a", "b", "c"], "subject": "Pick one", "body": "Which *letter*?",
                                   "defaults": ["a"], "multiple": multiple, "assigned_users": assigned or [],
                                   "params": {"n": {"value": 1, "description": None, "schema": {"type": "integer"}}}},
                                  try_number=1, now=T0)
    assert store.transition_ti(key, expected=[None], state=TaskInstanceState.DEFERRED, fields={
        "try_number": 1, "try_id": f"tok-{run_id}", "start_date": T0, "trigger": TRIGGER,
        "next_method": "execute_complete", "next_kwargs": {}, "hitl": request})
    return key


def _one(run_id: str, task_id: str = "extract") -> str:
    return f"{RUNS}/{run_id}/taskInstances/{task_id}/-1/hitlDetails"


def test_requests_are_listed_and_read_as_airflows_hitl_detail(api, store):
    _asking(api, store, "r1")
    _asking(api, store, "r2")
    listed = api.get(f"{RUNS}/~/hitlDetails")
    assert listed.status == 200, listed.body
    assert listed.body["total_entries"] == 2
    first = listed.body["hitl_details"][0]
    assert {k: first[k] for k in ("options", "subject", "body", "defaults", "multiple", "response_received",
                                  "chosen_options", "responded_by_user", "params_input", "assigned_users")} == {
        "options": ["a", "b", "c"], "subject": "Pick one", "body": "Which *letter*?", "defaults": ["a"],
        "multiple": False, "response_received": False, "chosen_options": None, "responded_by_user": None,
        "params_input": {}, "assigned_users": []}
    assert first["params"] == {"n": {"value": 1, "description": None, "schema": {"type": "integer"}}}
    assert first["task_instance"]["state"] == "deferred" and first["created_at"] == T0.isoformat()
    assert api.get("/api/v2/dags/~/dagRuns/~/hitlDetails", query={"subject_search": "pick"}).body[
        "total_entries"] == 2
    assert api.get(f"{RUNS}/r1/hitlDetails").body["total_entries"] == 1
    assert api.get("/api/v2/dags/~/dagRuns/r2/hitlDetails").body["total_entries"] == 1
    assert api.get("/api/v2/dags/nope/dagRuns/~/hitlDetails").body == {"hitl_details": [], "total_entries": 0}
    assert api.get(f"{RUNS}/~/hitlDetails", query={"response_received": "true"}).body["total_entries"] == 0
    assert api.get(f"{RUNS}/~/hitlDetails", query={"task_id": "load"}).body["total_entries"] == 0
    assert api.get(f"{RUNS}/~/hitlDetails", query={"state": "nope"}).status == 422

    one = api.get(_one("r1"))
    assert one.status == 200 and one.body["task_instance"]["dag_run_id"] == "r1"
    assert api.get(_one("r1") + "/tries/1").body["task_instance"]["try_number"] == 1
    assert api.get(_one("r1") + "/tries/2").status == 404
    assert api.get(_one("r9")).status == 404  # no such run
    store.transition_ti(TIKey("etl", "r1", "load"), expected=[None], state=TaskInstanceState.SCHEDULED,
                        fields={"try_number": 1})
    missing = api.get(_one("r1", "load"))
    assert missing.status == 404 and "Human-in-the-loop detail does not exist" in missing.body["detail"]


def test_a_response_is_checked_recorded_once_and_resumes_the_try(api, store):
    key = _asking(api, store, "r1")
    assert api("PATCH", _one("r1"), body={"chosen_options": ["z"]}).status == 400
    assert api("PATCH", _one("r1"), body={"chosen_options": ["a", "b"]}).status == 400  # multiple is False
    assert api("PATCH", _one("r1"), body={"chosen_options": []}).status == 422
    assert api("PATCH", _one("r1"), body={}).status == 422
    answer = api("PATCH", _one("r1"), body={"chosen_options": ["b"], "params_input": {"n": 3}})
    assert answer.status == 200, answer.body
    assert answer.body["chosen_options"] == ["b"] and answer.body["params_input"] == {"n": 3}
    who = answer.body["responded_by"]
    assert who["id"] == who["name"] and answer.body["responded_at"]

    # The try resumes at once: scheduled into execute_complete with the response as its event.
    ti = store.get_ti(key)
    assert (ti.state, ti.try_number, ti.next_method, ti.trigger) == (
        TaskInstanceState.SCHEDULED, 1, "execute_complete", None)
    assert ti.next_kwargs["event"] == {"chosen_options": ["b"], "params_input": {"n": 3},
                                       "responded_at": answer.body["responded_at"], "responded_by_user": who,
                                       "timedout": False}
    # The same response again (a client's retry) answers it again; another one is Airflow's 409.
    again = api("PATCH", _one("r1"), body={"chosen_options": ["b"], "params_input": {"n": 3}})
    assert again.status == 200 and again.body == answer.body
    assert api("PATCH", _one("r1"), body={"chosen_options": ["c"]}).status == 409
    shown = api.get(_one("r1")).body
    assert shown["response_received"] is True and shown["chosen_options"] == ["b"]
    assert shown["responded_by_user"] == who
    assert api.get(f"{RUNS}/~/hitlDetails", query={"response_received": "true"}).body["total_entries"] == 1


@pytest.mark.slow
def test_only_an_assigned_user_may_respond_and_several_options_need_multiple(api, store):
    _asking(api, store, "r1", assigned=[{"id": "alice", "name": "Alice"}], multiple=True)
    refused = api("PATCH", _one("r1"), body={"chosen_options": ["a"]})  # the IAM caller is not alice
    assert refused.status == 403 and "is not a respondent" in refused.body["detail"]
    from functions.api import handler

    event = proxy_event("PATCH", _one("r1"), {"Content-Type": "application/json"},
                        b'{"chosen_options": ["a", "c"]}', claims={"cognito:username": "alice",
                                                                    "cognito:groups": "User"}, iam=False)
    response = handler.handler(event, lambda_context("api"))
    assert response["statusCode"] == 200, response
    assert store.get_ti(TIKey("etl", "r1", "extract")).hitl["responded_by"] == {"id": "alice", "name": "alice"}
