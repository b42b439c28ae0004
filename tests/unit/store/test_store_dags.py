"""Parsed files into the store: versions, DAG rows, ownership across files, next runs, pause, due DAGs."""

from __future__ import annotations

import datetime as dt

import pendulum
import pytest
from store_helpers import T0, dag_doc, parsed_file

from updraft.limits import Table, ensure, size
from updraft.model.limits import run_tasks_limit
from updraft.model.records import DagRun
from updraft.model.states import DagRunState
from updraft.scheduling.commands.dag_registration import register_parsed_file, remove_dag_file, set_paused
from updraft.serialization import dag_hash
from updraft.store.dynamo import DynamoStore
from updraft.store.errors import ValueTooLarge
from updraft.timetables.base import DagRunInfo, DataInterval

NOW = pendulum.datetime(2024, 1, 3, 12, tz="UTC")


def test_new_dag_is_stored_paused_with_its_version_and_first_next_run(store):
    doc = dag_doc("daily", schedule="@daily", catchup=True, tags=["b", "a"])
    outcome = register_parsed_file(store, parsed_file("a.py", doc), now=NOW)

    assert outcome.stored == ["daily"] and outcome.duplicates == [] and outcome.import_errors == []
    meta = store.get_dag_meta("daily")
    assert meta.is_paused is True and meta.is_active is True
    assert meta.relative_fileloc == "a.py" and meta.file_version == "v1"
    assert meta.dag_hash == dag_hash(doc)
    assert meta.tags == ["a", "b"]
    assert meta.timetable_summary == doc["dag"]["timetable_summary"]
    # Airflow 3's "@daily" is a cron trigger: with catchup from Jan 1 the first run is Jan 1 itself.
    assert meta.next_dagrun_logical_date == T0 == meta.next_dagrun_run_after
    assert (meta.next_dagrun_data_interval_start, meta.next_dagrun_data_interval_end) == (T0, T0)
    sdag = store.get_serialized_dag("daily", meta.dag_hash)
    assert sdag.dag_id == "daily" and [t.task_id for t in sdag.tasks] == ["t"]


def test_catchup_false_starts_from_the_latest_interval(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=False)), now=NOW)
    meta = store.get_dag_meta("d")
    # Without catchup the first run is the latest trigger time before "now" (Jan 3 12:00).
    assert meta.next_dagrun_logical_date == pendulum.datetime(2024, 1, 3, tz="UTC")


def test_is_paused_upon_creation_false_starts_unpaused_and_due(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=True,
                                                       is_paused_upon_creation=False)), now=NOW)
    assert store.get_dag_meta("d").is_paused is False
    assert [m.dag_id for m in store.due_dags(NOW)] == ["d"]
    assert store.due_dags(T0 - dt.timedelta(seconds=1)) == []  # not due before its run_after


def test_same_file_twice_is_unchanged_and_writes_nothing(store):
    parsed = parsed_file("a.py", dag_doc("d", schedule="@daily"))
    register_parsed_file(store, parsed, now=NOW)
    set_paused(store, "d", False)
    again = register_parsed_file(store, parsed, now=NOW + dt.timedelta(hours=1))
    assert again.stored == [] and again.unchanged == ["d"]
    assert store.get_dag_meta("d").is_paused is False  # a re-parse never resets the pause flag


def test_a_changed_dag_is_a_new_version_and_old_versions_stay_readable(store):
    v1 = dag_doc("d", tasks=("a",))
    v2 = dag_doc("d", tasks=("a", "b"))
    register_parsed_file(store, parsed_file("a.py", v1), now=NOW)
    out = register_parsed_file(store, parsed_file("a.py", v2, version="v2"), now=NOW)
    assert out.stored == ["d"]
    meta = store.get_dag_meta("d")
    assert meta.dag_hash == dag_hash(v2) and meta.file_version == "v2"
    # A run pinned to v1 keeps reading v1.
    assert [t.task_id for t in store.get_serialized_dag("d", dag_hash(v1)).tasks] == ["a"]
    assert [t.task_id for t in store.get_serialized_dag("d", dag_hash(v2)).tasks] == ["a", "b"]
    assert store.get_serialized_dag("d", "0" * 64) is None


def test_duplicate_dag_id_in_another_active_file_is_refused_with_airflows_message(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("shared", path="a.py")), now=NOW)
    outcome = register_parsed_file(store, parsed_file("b.py", dag_doc("shared", path="b.py"),
                                                 dag_doc("own", path="b.py")), now=NOW)

    assert outcome.duplicates == ["shared"] and outcome.stored == ["own"]
    message = "AirflowDagDuplicatedIdException: Ignoring DAG shared from b.py - also found in a.py"
    assert [e["message"] for e in outcome.import_errors] == [message]
    assert store.get_dag_meta("shared").relative_fileloc == "a.py"
    errors = store.list_import_errors()
    assert [(e["filename"], e["dag_id"], e["message"]) for e in errors] == [("b.py", "shared", message)]
    # Idempotent: the same delivery again gives the same refusal and one error, not two.
    again = register_parsed_file(store, parsed_file("b.py", dag_doc("shared", path="b.py"),
                                               dag_doc("own", path="b.py")), now=NOW)
    assert again.duplicates == ["shared"] and len(store.list_import_errors()) == 1


def test_dag_dropped_from_its_file_is_deactivated_and_can_move_to_another_file(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("x"), dag_doc("y")), now=NOW)
    outcome = register_parsed_file(store, parsed_file("a.py", dag_doc("x")), now=NOW)
    assert outcome.deactivated == ["y"]
    assert store.get_dag_meta("y").is_active is False
    assert [m.dag_id for m in store.list_dags()] == ["x"]
    assert [m.dag_id for m in store.list_dags(include_inactive=True)] == ["x", "y"]
    # Now free: another file may define it.
    moved = register_parsed_file(store, parsed_file("b.py", dag_doc("y", path="b.py")), now=NOW)
    assert moved.stored == ["y"]
    meta = store.get_dag_meta("y")
    assert meta.relative_fileloc == "b.py" and meta.is_active is True
    # The old file dropping it again must not deactivate it under its new owner.
    assert register_parsed_file(store, parsed_file("a.py", dag_doc("x")), now=NOW).deactivated == []


def test_stale_owner_that_no_longer_defines_the_dag_does_not_block_it(store):
    # a.py's row says it owns "z" but a.py's file record does not list it (a lost removal event).
    register_parsed_file(store, parsed_file("a.py", dag_doc("z")), now=NOW)
    store.models.file("FILE#a.py", "META").delete()
    # While a.py's save could still be in progress (its file record is written last), the row is trusted.
    soon = register_parsed_file(store, parsed_file("b.py", dag_doc("z", path="b.py")), now=NOW.add(minutes=5))
    assert soon.duplicates == ["z"]
    outcome = register_parsed_file(store, parsed_file("b.py", dag_doc("z", path="b.py")), now=NOW.add(hours=1))
    assert outcome.stored == ["z"] and store.get_dag_meta("z").relative_fileloc == "b.py"
    assert store.list_import_errors() == []


def test_removed_file_deactivates_its_dags_and_drops_its_import_errors(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("x"), errors=("SyntaxError: nope",)), now=NOW)
    assert len(store.list_import_errors()) == 1
    assert remove_dag_file(store, "a.py") == ["x"]
    assert store.get_dag_meta("x").is_active is False
    assert store.list_import_errors() == []
    assert remove_dag_file(store, "a.py") == []  # at-least-once delivery


def test_import_errors_are_listed_while_present_and_cleared_by_a_clean_parse(store):
    register_parsed_file(store, parsed_file("broken.py", errors=("RuntimeError: boom",)), now=NOW)
    (error,) = store.list_import_errors()
    assert error["filename"] == "broken.py" and error["message"] == "RuntimeError: boom"
    assert error["lineno"] == 1 and error["timestamp"] == NOW.isoformat()
    register_parsed_file(store, parsed_file("broken.py", dag_doc("ok", path="broken.py")), now=NOW)
    assert store.list_import_errors() == []


def test_large_serialized_dag_goes_to_s3_and_reads_back(store, s3, config):
    small = DynamoStore(config.__class__(**{**config.__dict__, "large_item_bytes": 200}), s3_client=s3)
    doc = dag_doc("big", tasks=tuple(f"task_{i}" for i in range(50)))
    register_parsed_file(small, parsed_file("a.py", doc), now=NOW)
    item = store.models.dag_version.get("DAG#big", f"VERSION#{dag_hash(doc)}")
    assert item.data is None and item.s3_key.endswith(f"{dag_hash(doc)}.json.gz")
    assert s3.head_object(Bucket=config.s3_bucket, Key=item.s3_key)["ContentLength"] > 200
    fresh = DynamoStore(small.config, s3_client=s3)  # no cache
    assert len(fresh.get_serialized_dag("big", dag_hash(doc)).tasks) == 50


def test_large_dag_without_a_bucket_is_a_clear_error(store, config):
    tiny = DynamoStore(config.__class__(**{**config.__dict__, "large_item_bytes": 10}))
    with pytest.raises(ValueTooLarge, match="no S3 bucket"):
        register_parsed_file(tiny, parsed_file("a.py", dag_doc("d")), now=NOW)


def test_timetable_change_recomputes_the_next_run_from_the_last_automated_run(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=True)), now=NOW)
    assert store.advance_next_dagrun("d", expected_logical_date=T0, next_info=DagRunInfo.exact(T0.add(days=1)),
                                     last_automated=DataInterval.exact(T0))
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@hourly", catchup=True)), now=NOW)
    meta = store.get_dag_meta("d")
    # Hourly after the last automated run (Jan 1 00:00), not from the start date again.
    assert meta.next_dagrun_logical_date == T0.add(hours=1) == meta.next_dagrun_run_after


def test_unchanged_timetable_keeps_the_advanced_next_run(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=True)), now=NOW)
    second = DagRunInfo.interval(T0.add(days=1), T0.add(days=2))
    store.advance_next_dagrun("d", expected_logical_date=T0, next_info=second,
                              last_automated=DataInterval(T0, T0.add(days=1)))
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=True, tasks=("t", "u"))),
                           now=NOW)
    assert store.get_dag_meta("d").next_dagrun_logical_date == T0.add(days=1)


def test_advance_is_conditional_on_the_expected_next_run(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=True,
                                                       is_paused_upon_creation=False)), now=NOW)
    second = DagRunInfo.interval(T0.add(days=1), T0.add(days=2))
    assert store.advance_next_dagrun("d", expected_logical_date=T0, next_info=second,
                                     last_automated=DataInterval(T0, T0.add(days=1)))
    # A second scheduler that read the old next run loses.
    assert not store.advance_next_dagrun("d", expected_logical_date=T0, next_info=second,
                                         last_automated=DataInterval(T0, T0.add(days=1)))
    meta = store.get_dag_meta("d")
    assert meta.next_dagrun_run_after == T0.add(days=2)
    assert meta.last_automated_data_interval_end == T0.add(days=1)
    assert [m.dag_id for m in store.due_dags(T0.add(days=2))] == ["d"]
    assert store.due_dags(T0.add(days=1)) == []
    # No further run: the DAG leaves the due index.
    assert store.advance_next_dagrun("d", expected_logical_date=T0.add(days=1), next_info=None,
                                     last_automated=second.data_interval)
    assert store.get_dag_meta("d").next_dagrun_logical_date is None
    assert store.due_dags(T0.add(days=30)) == []
    assert not store.advance_next_dagrun("nope", expected_logical_date=None, next_info=None, last_automated=None)


def test_advance_on_a_paused_dag_moves_the_run_but_keeps_it_out_of_the_due_index(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=True)), now=NOW)
    second = DagRunInfo.interval(T0.add(days=1), T0.add(days=2))
    assert store.advance_next_dagrun("d", expected_logical_date=T0, next_info=second, last_automated=None)
    assert store.get_dag_meta("d").next_dagrun_logical_date == T0.add(days=1)
    assert store.due_dags(T0.add(days=30)) == []


def test_pause_and_unpause_move_the_dag_in_and_out_of_the_due_index(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=True)), now=NOW)
    assert store.due_dags(NOW) == []
    assert set_paused(store, "d", False)
    assert [m.dag_id for m in store.due_dags(NOW)] == ["d"]
    assert set_paused(store, "d", False)  # already unpaused: still True, no change
    assert set_paused(store, "d", True)
    assert store.due_dags(NOW) == []
    assert not set_paused(store, "missing", True)


def test_unpausing_a_catchup_false_dag_skips_the_intervals_it_was_paused_for(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=False)), now=NOW)
    later = pendulum.datetime(2024, 3, 1, 6, tz="UTC")
    set_paused(store, "d", False, now=later)
    assert store.get_dag_meta("d").next_dagrun_logical_date == pendulum.datetime(2024, 3, 1, tz="UTC")


def test_deactivated_dag_leaves_the_due_index(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=True,
                                                       is_paused_upon_creation=False)), now=NOW)
    assert store.due_dags(NOW)
    remove_dag_file(store, "a.py")
    assert store.due_dags(NOW) == []
    # Re-added: active and due again, pause flag kept.
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=True)), now=NOW)
    assert [m.dag_id for m in store.due_dags(NOW)] == ["d"]


def test_max_active_tasks_change_resizes_the_limits_of_the_dags_active_runs(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", max_active_tasks=4)), now=NOW)
    store.create_run(DagRun("d", "going", "manual", "h", state=DagRunState.RUNNING, logical_date=T0))
    store.create_run(DagRun("d", "over", "manual", "h", state=DagRunState.SUCCESS, logical_date=T0))
    table = Table(*store.transaction_target())
    for run_id in ("going", "over"):
        assert ensure(table, run_tasks_limit("d", run_id), 4)
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", max_active_tasks=2)), now=NOW)
    assert size(table, run_tasks_limit("d", "going")) == 2
    assert size(table, run_tasks_limit("d", "over")) == 4  # a finished run's counters are left as they were


def test_unknown_custom_timetable_stores_the_dag_and_reports_why_it_cannot_be_scheduled(store):
    doc = dag_doc("custom", schedule="@daily")
    doc["dag"]["timetable"] = {"__type": "my_plugin.NotLoaded", "__var": {}}
    outcome = register_parsed_file(store, parsed_file("a.py", doc), now=NOW)
    assert outcome.stored == ["custom"]
    (error,) = outcome.import_errors
    assert error["dag_id"] == "custom" and "my_plugin.NotLoaded" in error["message"]
    assert store.get_dag_meta("custom").next_dagrun_run_after is None


def test_dict_form_of_a_parsed_file_is_accepted(store):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d")).to_dict(), now=NOW)
    assert store.get_dag_meta("d") is not None


def test_a_module_without_dags_or_errors_leaves_no_trace(store):
    outcome = register_parsed_file(store, parsed_file("helpers.py"), now=NOW)
    assert outcome.stored == [] and outcome.import_errors == []
    assert store.get_file_record("helpers.py") is None
    assert remove_dag_file(store, "helpers.py") == []
