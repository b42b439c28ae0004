"""Backfills in the store: one active per DAG (a conditional marker), progress that only one scheduler moves,
completion that frees the DAG, an orphaned marker dropped after its grace, and the requests each costs."""

from __future__ import annotations

import datetime as dt
import re

from tests.unit.store.test_store_requests import calls  # noqa: F401  (a fixture)
from updraft.model.backfills import Backfill
from updraft.model.records import DagRun
from updraft.model.states import DagRunState
from updraft.store import keys
from updraft.store.backfills import ORPHAN_GRACE, _models

NOW = dt.datetime(2024, 2, 1, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


def _backfill(store, dag_id: str = "d", **over) -> Backfill:
    fields = {"id": store.next_backfill_id(), "dag_id": dag_id, "from_date": NOW - 9 * DAY, "to_date": NOW - DAY,
              "dag_hash": "h", "created_at": NOW, "updated_at": NOW, "dag_run_conf": {"state": 1},
              "skipped": {"2024-01-25T00:00:00+00:00": "in flight"}}
    return Backfill(**{**fields, **over})


def test_one_active_backfill_per_dag_until_it_completes(store):
    first = _backfill(store)
    assert first.id == 1 and store.create_backfill(first)
    assert store.get_backfill(1) == first
    second = _backfill(store)
    assert second.id == 2 and not store.create_backfill(second)  # the DAG's marker names the first
    assert store.get_backfill(2) is None and store.active_backfill_id("d") == 1
    assert store.create_backfill(_backfill(store, "other"))
    assert [b.id for b in store.active_backfills(NOW)] == [1, 3]
    assert store.complete_backfill(1, now=NOW + DAY)
    assert not store.complete_backfill(1, now=NOW + 2 * DAY)  # once
    assert store.get_backfill(1).completed_at == NOW + DAY and store.active_backfill_id("d") is None
    assert [b.id for b in store.active_backfills(NOW)] == [3]
    assert store.create_backfill(_backfill(store))
    assert [b.id for b in store.list_backfills("d")] == [1, 4]


def test_progress_moves_from_the_value_read_and_a_completed_backfill_never_changes(store):
    store.create_backfill(_backfill(store))
    assert store.advance_backfill(1, expected_created=0, created=1, now=NOW)
    assert not store.advance_backfill(1, expected_created=0, created=1, now=NOW)  # another scheduler was first
    assert store.set_backfill_paused(1, True, now=NOW + DAY)
    got = store.get_backfill(1)
    assert (got.created, got.is_paused, got.updated_at) == (1, True, NOW + DAY)
    store.complete_backfill(1, now=NOW, pause=True)
    assert not store.set_backfill_paused(1, False, now=NOW)
    assert not store.advance_backfill(1, expected_created=1, created=2, now=NOW)
    assert not store.set_backfill_paused(99, True, now=NOW)  # no such backfill


def test_a_marker_left_without_its_backfill_is_dropped_after_the_grace(store):
    store.create_backfill(_backfill(store))
    B, _, _ = _models(store.config)
    B(keys.backfill_pk(1), keys.META).delete()  # as if the creating call died between its two puts
    assert store.active_backfills(NOW + ORPHAN_GRACE / 2) == [] and store.active_backfill_id("d") == 1
    assert store.active_backfills(NOW + ORPHAN_GRACE) == [] and store.active_backfill_id("d") is None


def test_runs_dated_between_reads_one_dag_s_runs_by_logical_date(store):
    for day in (1, 2, 3):
        logical = NOW + day * DAY
        store.create_run(DagRun("d", f"r{day}", "scheduled", "h", state=DagRunState.SUCCESS, logical_date=logical))
    store.create_run(DagRun("d", "no-date", "manual", "h", run_after=NOW + 2 * DAY))
    assert [r.run_id for r in store.runs_dated_between("d", NOW + 2 * DAY, NOW + 3 * DAY)] == ["r2", "r3"]


def test_costs_and_placeholders(store, calls):  # noqa: F811
    backfill = _backfill(store)
    assert [op for op, _ in calls] == ["UpdateItem"]
    calls.clear()
    store.create_backfill(backfill)
    assert [op for op, _ in calls] == ["PutItem", "PutItem"]
    calls.clear()
    store.active_backfills(NOW)
    assert [op for op, _ in calls] == ["Query", "BatchGetItem", "BatchGetItem"]
    store.advance_backfill(1, expected_created=0, created=1, now=NOW)
    store.set_backfill_paused(1, False, now=NOW)
    store.list_backfills("d")
    store.runs_dated_between("d", NOW, NOW)
    store.complete_backfill(1, now=NOW)
    expressions = [p[k] for _, p in calls for k in ("UpdateExpression", "ConditionExpression",
                                                    "KeyConditionExpression", "FilterExpression") if k in p]
    for expression in expressions:  # reserved words (value, created...) only ever as #placeholders
        assert set(re.findall(r"(?<![#:\w])[A-Za-z_]\w*", expression)) <= {
            "SET", "ADD", "AND", "BETWEEN", "attribute_exists", "attribute_not_exists"}, expression
