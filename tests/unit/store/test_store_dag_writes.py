"""The DAG row's named writes registration is made of: each refuses when its condition no longer holds."""

from __future__ import annotations

import dataclasses

import pendulum

from updraft.store.api import FileRecord

NOW = pendulum.datetime(2024, 1, 3, tz="UTC")
ROW = {"dag_hash": "h1", "relative_fileloc": "a.py", "is_active": True, "is_paused": False,
       "next_dagrun_logical_date": NOW, "next_dagrun_run_after": NOW, "updated_at": NOW}


def test_put_new_dag_creates_once(store):
    assert store.put_new_dag("d", ROW)
    assert not store.put_new_dag("d", {**ROW, "relative_fileloc": "b.py"})
    meta = store.get_dag_meta("d")
    assert meta.relative_fileloc == "a.py" and meta.updated_at == NOW
    assert [m.dag_id for m in store.due_dags(NOW)] == ["d"]  # active, unpaused, due: in the index


def test_update_dag_meta_applies_only_over_the_row_it_read(store):
    store.put_new_dag("d", ROW)
    read = store.get_dag_meta("d")
    assert store.update_dag_meta("d", {"is_paused": True}, expected=read)
    assert store.due_dags(NOW) == []  # the due entry follows the written pause
    assert not store.update_dag_meta("d", {"dag_hash": "h2"}, expected=read)  # stale: it was paused meanwhile
    fresh = store.get_dag_meta("d")
    assert fresh.dag_hash == "h1"
    assert store.update_dag_meta("d", {"is_paused": False, "next_dagrun_logical_date": None,
                                       "next_dagrun_run_after": None}, expected=fresh)
    after = store.get_dag_meta("d")
    assert after.next_dagrun_run_after is None and store.due_dags(NOW) == []
    assert not store.update_dag_meta("nope", {"is_paused": True}, expected=dataclasses.replace(read, dag_id="nope"))


def test_deactivate_dag_only_for_its_owner(store):
    store.put_new_dag("d", ROW)
    assert not store.deactivate_dag("d", expected_owner="b.py")
    assert store.deactivate_dag("d", expected_owner="a.py")
    assert not store.deactivate_dag("d", expected_owner="a.py")  # already inactive
    assert store.get_dag_meta("d").is_active is False and store.due_dags(NOW) == []


def test_file_record_is_written_only_when_it_changed(store):
    record = FileRecord("a.py", "f1", "v1", ["d"], [{"filename": "a.py", "message": "m", "stacktrace": "x" * 20_000}],
                        parsed_at=NOW)
    assert store.put_file_record(record, previous=None)
    stored = store.get_file_record("a.py")
    assert stored.dag_ids == ["d"] and len(stored.import_errors[0]["stacktrace"]) < 20_000  # trimmed to fit
    assert not store.put_file_record(dataclasses.replace(record, parsed_at=NOW.add(hours=1)), previous=stored)
    assert store.get_file_record("a.py").parsed_at == NOW
    store.delete_file_record("a.py")
    assert store.get_file_record("a.py") is None
