"""Pool and import-error routes on moto: CRUD with the slot counts, default_pool's rules, errors by id."""

from __future__ import annotations

import datetime as dt

from updraft.limits import Acquired, Claim, Need, acquire, ensure, room, size
from updraft.model.limits import pool_limit
from updraft.model.records import TIKey
from updraft.model.states import TaskInstanceState
from updraft.scheduling.holding import limits_table

NOW = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)


def test_pools_crud(api):
    created = api("POST", "/api/v2/pools", body={"name": "etl_pool", "slots": 4, "description": "ETL",
                                                 "include_deferred": False})
    assert created.status == 201
    assert created.body == {"name": "etl_pool", "slots": 4, "description": "ETL", "include_deferred": False,
                            "occupied_slots": 0, "running_slots": 0, "queued_slots": 0, "scheduled_slots": 0,
                            "open_slots": 4, "deferred_slots": 0, "team_name": None}
    assert api("POST", "/api/v2/pools", body={"name": "etl_pool", "slots": 1}).status == 409
    listed = api.get("/api/v2/pools")
    assert [p["name"] for p in listed.body["pools"]] == ["default_pool", "etl_pool"]
    assert listed.body["total_entries"] == 2 and listed.body["pools"][0]["slots"] == 128
    patched = api("PATCH", "/api/v2/pools/etl_pool", query={"update_mask": "slots"},
                  body={"slots": 8, "description": "ignored: not in the mask"})
    assert (patched.status, patched.body["slots"], patched.body["description"]) == (200, 8, "ETL")
    described = api("PATCH", "/api/v2/pools/etl_pool", body={"description": "Extract"})
    assert (described.body["slots"], described.body["description"]) == (8, "Extract")
    assert api.get("/api/v2/pools/etl_pool").body["slots"] == 8
    deleted = api("DELETE", "/api/v2/pools/etl_pool")
    assert (deleted.status, deleted.body) == (204, None)
    assert api.get("/api/v2/pools/etl_pool").body == {"detail": "The Pool with name: `etl_pool` was not found"}
    assert api("DELETE", "/api/v2/pools/etl_pool").status == 404
    assert api("PATCH", "/api/v2/pools/etl_pool", body={"slots": 1}).status == 404


def test_default_pool_cannot_be_deleted_or_renamed(api):
    refused = api("DELETE", "/api/v2/pools/default_pool")
    assert (refused.status, refused.body) == (400, {"detail": "Default Pool can't be deleted"})
    assert api("PATCH", "/api/v2/pools/default_pool", body={"pool": "other"}).status == 400
    assert api("PATCH", "/api/v2/pools/default_pool", body={"slots": 64}).body["slots"] == 64


def test_pool_bodies_are_validated(api):
    assert api("POST", "/api/v2/pools", body={"name": "p"}).status == 422
    assert api("POST", "/api/v2/pools", body={"name": "p", "slots": -2}).body["detail"][0]["type"] == \
        "greater_than_equal"
    assert api("POST", "/api/v2/pools", body={"name": "p", "slots": "4"}).body["detail"][0]["type"] == "int_type"
    assert api("POST", "/api/v2/pools", body={"name": "p", "slots": 1, "team_name": "t"}).status == 400
    # include_deferred is honoured since deferral exists (issue 16): a deferred task keeps its slot of this pool
    created = api("POST", "/api/v2/pools", body={"name": "p", "slots": 1, "include_deferred": True})
    assert (created.status, created.body["include_deferred"]) == (201, True)
    patched = api("PATCH", "/api/v2/pools/p", body={"include_deferred": False})
    assert patched.body["include_deferred"] is False
    assert api("POST", "/api/v2/pools", body={"name": "p", "slots": 1, "bogus": 1}).status == 422


def test_import_errors_list_and_get(api):
    listed = api.get("/api/v2/importErrors")
    assert listed.status == 200 and listed.body["total_entries"] == 1
    (error,) = listed.body["import_errors"]
    assert error["filename"] == "broken.py" and "NameError" in error["stack_trace"]
    assert error["timestamp"] == "2024-03-01T00:00:00Z" and error["bundle_name"] is None
    assert api.get(f"/api/v2/importErrors/{error['import_error_id']}").body == error
    assert api.get("/api/v2/importErrors/1").status == 404
    assert api.get("/api/v2/importErrors/x").status == 422
    assert api.get("/api/v2/importErrors", query={"filename_pattern": "etl"}).body["total_entries"] == 0


def test_slot_counts_include_the_tries_holding_the_pool_by_ticket(api, store):
    store.set_pool("ticket_pool", 4)
    run_id = api("POST", "/api/v2/dags/etl/dagRuns", body={"logical_date": None}).body["dag_run_id"]
    table = limits_table(store)
    for task_id, state, slots in (("extract", TaskInstanceState.RUNNING, 2), ("load", TaskInstanceState.DEFERRED, 1),
                                  ("report", TaskInstanceState.QUEUED, 1)):
        key = TIKey("etl", run_id, task_id)

        def holder(ticket, held, key=key, state=state):
            return store.transition_item(key, expected=[None], state=state, ticket=ticket, held_ticket=held,
                                         fields={"try_number": 1, "pool": "ticket_pool"})

        assert isinstance(acquire(table, [Claim(holder, (Need(pool_limit("ticket_pool"), slots, 4),))]), Acquired)
    body = api.get("/api/v2/pools/ticket_pool").body
    assert (body["occupied_slots"], body["running_slots"], body["deferred_slots"], body["queued_slots"],
            body["open_slots"]) == (4, 2, 1, 1, 0)
    assert api.get("/api/v2/pools", query={"pool_name_pattern": "ticket"}).body["total_entries"] == 1


def test_resizing_a_pool_resizes_its_counters_at_once(api, store):
    assert api("POST", "/api/v2/pools", body={"name": "sized", "slots": 4}).status == 201
    table = limits_table(store)
    assert ensure(table, pool_limit("sized"), 4)  # as the pool's first claim creates them
    assert api("PATCH", "/api/v2/pools/sized", body={"slots": 2}).status == 200
    assert (size(table, pool_limit("sized")), room(table, pool_limit("sized"))) == (2, 2)
