"""DAG runs and task instances: conditional creation and transitions, fencing, the active-runs index."""

from __future__ import annotations

import datetime as dt

import pendulum
import pytest

from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import DagRunState, TaskInstanceState

T0 = pendulum.datetime(2024, 1, 1, tz="UTC")
S = TaskInstanceState


def run(dag_id: str = "d", day: int = 1, **kwargs) -> DagRun:
    logical = T0.add(days=day - 1)
    fields = {"run_id": f"scheduled__{logical.isoformat()}", "run_type": "scheduled", "dag_hash": "h1",
              "logical_date": logical, "data_interval_start": logical, "data_interval_end": logical.add(days=1),
              "run_after": logical.add(days=1), "queued_at": logical.add(days=1), **kwargs}
    return DagRun(dag_id=dag_id, **fields)


def test_create_run_once_then_false(store):
    r = run(conf={"n": 1, "nested": {"a": [1, 2.5, None, "x"]}})
    assert store.create_run(r)
    assert not store.create_run(run(conf={"other": True}))  # same (dag_id, run_id): the first one stays
    got = store.get_run("d", r.run_id)
    assert got == r
    assert store.get_run("d", "nope") is None


def test_list_runs_newest_logical_date_first_and_previous_run(store):
    for day in (2, 1, 3):
        store.create_run(run(day=day))
    manual = DagRun(dag_id="d", run_id="manual__x", run_type="manual", dag_hash="h1",
                    run_after=T0.add(days=1, hours=12))  # no logical date
    store.create_run(manual)
    store.create_run(run(dag_id="other", day=5))
    logicals = [r.logical_date for r in store.list_runs("d")]
    # A run without a logical date sorts by its run_after (Jan 2 12:00).
    assert logicals == [T0.add(days=2), None, T0.add(days=1), T0]
    assert [r.logical_date for r in store.list_runs("d", limit=2)] == [T0.add(days=2), None]
    # previous_run skips the run without a logical date sorting between Jan 3 and Jan 2.
    assert store.previous_run("d", T0.add(days=2)).logical_date == T0.add(days=1)
    assert store.previous_run("d", T0.add(days=1)).logical_date == T0
    assert store.previous_run("d", T0) is None


def test_previous_scheduled_run_skips_manual_runs(store):
    """With catchup, Airflow's depends_on_past looks at the previous scheduled run (get_previous_scheduled_dagrun)."""
    store.create_run(run(day=1))
    store.create_run(DagRun(dag_id="d", run_id="manual__noon", run_type="manual", dag_hash="h1",
                            logical_date=T0.add(hours=12)))
    assert store.previous_run("d", T0.add(days=1)).run_id == "manual__noon"
    assert store.previous_run("d", T0.add(days=1), scheduled_only=True).logical_date == T0
    assert store.previous_run("d", T0.add(hours=12), scheduled_only=True).logical_date == T0


def test_active_runs_index_tracks_queued_and_running_only(store):
    a, b, c = run(day=1), run(day=2), run(dag_id="e", day=1)
    for r in (a, b, c):
        store.create_run(r)
    store.create_run(run(day=3, state=DagRunState.SUCCESS))
    assert {(r.dag_id, r.run_id) for r in store.active_runs()} == {(x.dag_id, x.run_id) for x in (a, b, c)}
    now = T0.add(days=5)
    assert store.set_run_state("d", a.run_id, expected=[DagRunState.QUEUED], state=DagRunState.RUNNING, now=now)
    assert store.get_run("d", a.run_id).start_date == now
    assert store.set_run_state("d", a.run_id, expected=[DagRunState.RUNNING], state=DagRunState.SUCCESS,
                               now=now.add(hours=1))
    finished = store.get_run("d", a.run_id)
    assert (finished.state, finished.end_date, finished.note) == (DagRunState.SUCCESS, now.add(hours=1), None)
    assert {r.run_id for r in store.active_runs()} == {b.run_id, c.run_id}
    # Cleared: back to queued, back in the index, times reset.
    assert store.set_run_state("d", a.run_id, expected=[DagRunState.SUCCESS], state=DagRunState.QUEUED,
                               now=now.add(hours=2))
    cleared = store.get_run("d", a.run_id)
    assert cleared.end_date is None and cleared.start_date is None and cleared.queued_at == now.add(hours=2)
    assert a.run_id in {r.run_id for r in store.active_runs()}


def test_set_run_state_is_conditional(store):
    r = run()
    store.create_run(r)
    now = T0.add(days=3)
    assert not store.set_run_state("d", r.run_id, expected=[DagRunState.RUNNING], state=DagRunState.SUCCESS,
                                   now=now)
    assert not store.set_run_state("d", "missing", expected=[DagRunState.QUEUED], state=DagRunState.RUNNING,
                                   now=now)
    assert store.get_run("d", "missing") is None  # a failed update does not create the item
    assert store.set_run_state("d", r.run_id, expected=[DagRunState.QUEUED], state=DagRunState.RUNNING, now=now)
    # The same transition delivered twice: the second loses.
    assert not store.set_run_state("d", r.run_id, expected=[DagRunState.QUEUED], state=DagRunState.RUNNING,
                                   now=now)
    # A second start keeps the first start date.
    assert store.set_run_state("d", r.run_id, expected=[DagRunState.RUNNING], state=DagRunState.RUNNING,
                               now=now.add(hours=1))
    assert store.get_run("d", r.run_id).start_date == now


KEY = TIKey("d", "scheduled__2024-01-01T00:00:00+00:00", "extract", -1)


def test_ti_created_only_if_absent(store):
    assert store.transition_ti(KEY, expected=[None], state=S.SCHEDULED,
                               fields={"pool": "etl", "pool_slots": 2, "priority_weight": 7})
    assert not store.transition_ti(KEY, expected=[None], state=S.SKIPPED)
    ti = store.get_ti(KEY)
    assert (ti.state, ti.pool, ti.pool_slots, ti.priority_weight) == (S.SCHEDULED, "etl", 2, 7)
    assert store.get_ti(TIKey("d", KEY.run_id, "other")) is None


def test_ti_transition_on_expected_state_with_fields_set_and_removed(store):
    now = T0.add(days=2)
    store.transition_ti(KEY, expected=[None], state=S.SCHEDULED)
    assert store.transition_ti(KEY, expected=[S.SCHEDULED], state=S.QUEUED,
                               fields={"try_number": 1, "try_id": "try-1", "queued_at": now,
                                       "hostname": "worker-0", "note": "n"})
    assert not store.transition_ti(KEY, expected=[S.SCHEDULED], state=S.QUEUED, fields={"try_id": "try-2"})
    ti = store.get_ti(KEY)
    assert (ti.state, ti.try_number, ti.try_id, ti.queued_at) == (S.QUEUED, 1, "try-1", now)
    assert ti.hostname == "worker-0"
    assert store.transition_ti(KEY, expected=[S.QUEUED, S.SCHEDULED], state=S.RUNNING,
                               fields={"note": None, "start_date": now, "hostname": "worker-1"})
    ti = store.get_ti(KEY)
    assert ti.note is None and ti.start_date == now and ti.hostname == "worker-1"


def test_ti_try_id_fences_a_stale_worker(store):
    store.transition_ti(KEY, expected=[None], state=S.QUEUED, fields={"try_number": 2, "try_id": "new"})
    assert not store.transition_ti(KEY, expected=[S.QUEUED], state=S.RUNNING, expected_try_id="old")
    assert store.transition_ti(KEY, expected=[S.QUEUED], state=S.RUNNING, expected_try_id="new")
    lease = T0.add(days=1)
    assert store.heartbeat(KEY, try_id="new", lease_expires_at=lease)
    assert store.get_ti(KEY).lease_expires_at == lease
    assert not store.heartbeat(KEY, try_id="old", lease_expires_at=lease)
    store.transition_ti(KEY, expected=[S.RUNNING], state=S.FAILED, expected_try_id="new")
    assert not store.heartbeat(KEY, try_id="new", lease_expires_at=lease)  # ended by someone else


def test_ti_none_or_state_creates_or_moves(store):
    other = TIKey(KEY.dag_id, KEY.run_id, "load", 3)
    assert store.transition_ti(other, expected=[None, S.SCHEDULED], state=S.UPSTREAM_FAILED)
    ti = store.get_ti(other)
    assert (ti.task_id, ti.map_index, ti.state) == ("load", 3, S.UPSTREAM_FAILED)
    assert not store.transition_ti(other, expected=[None, S.SCHEDULED], state=S.SKIPPED)


def test_get_run_tis_returns_the_run_only_in_map_index_order(store):
    for i in (10, 2, -1, 0):
        store.transition_ti(TIKey("d", "r1", "m", i), expected=[None], state=S.SCHEDULED)
    store.transition_ti(TIKey("d", "r2", "m", 0), expected=[None], state=S.SCHEDULED)
    store.put_xcom(TIKey("d", "r1", "m", 0), "return_value", [1, 2], now=T0)  # same partition, not a TI
    assert [ti.map_index for ti in store.get_run_tis("d", "r1")] == [-1, 0, 2, 10]
    assert store.get_run_tis("d", "r3") == []


def test_unknown_ti_fields_are_refused(store):
    with pytest.raises(ValueError, match="not settable"):
        store.transition_ti(KEY, expected=[None], state=S.SCHEDULED, fields={"colour": "red"})
    with pytest.raises(ValueError, match="not settable"):
        store.transition_ti(KEY, expected=[None], state=S.SCHEDULED, fields={"task_id": "x"})


def test_ti_round_trips_every_field(store):
    now = T0.add(hours=5)
    ti = TaskInstance("d", "r", "t", 4, state=S.RUNNING, try_number=3, try_id="abc", pool="p", pool_slots=2,
                      priority_weight=9, executor="fargate", queued_at=now, start_date=now, end_date=None,
                      next_retry_at=now.add(minutes=5), lease_expires_at=now.add(minutes=1),
                      hostname="h", xcom_length=12, note="why")
    fields = {k: v for k, v in ti.__dict__.items() if k not in {"dag_id", "run_id", "task_id", "map_index",
                                                                "state"}}
    assert store.transition_ti(ti.key, expected=[None], state=S.RUNNING, fields=fields)
    assert store.get_ti(ti.key) == ti


def test_naive_datetimes_are_taken_as_utc(store):
    naive = dt.datetime(2024, 5, 1, 12, 0)
    store.transition_ti(KEY, expected=[None], state=S.SCHEDULED, fields={"queued_at": naive})
    assert store.get_ti(KEY).queued_at == pendulum.datetime(2024, 5, 1, 12, tz="UTC")


def test_xcoms_inline_and_in_s3(store, s3, config):
    key = TIKey("d", "r", "t", -1)
    store.put_xcom(key, "return_value", {"rows": 3}, now=T0)
    store.put_xcom(key, "return_value", {"rows": 4}, now=T0)  # overwrite, as XCom.set does
    assert store.get_xcom(key, "return_value") == {"rows": 4}
    assert store.get_xcom(key, "missing", default="dflt") == "dflt"
    big = ["x" * 40 + str(i) for i in range(20_000)]
    small = type(store)(config.__class__(**{**config.__dict__, "large_item_bytes": 1000}), s3_client=s3)
    small.put_xcom(TIKey("d", "r", "t", 1), "big", big, now=T0)
    assert store.get_xcom(TIKey("d", "r", "t", 1), "big") == big
    assert store.list_xcoms("d", "r", "t") == {(-1, "return_value"): {"rows": 4}, (1, "big"): big}
    assert store.list_xcoms("d", "r", "t", map_index=1) == {(1, "big"): big}
    assert store.clear_xcoms(key) == 1
    assert store.get_xcom(key, "return_value") is None


def test_start_ti_starts_exactly_the_queued_try_and_returns_it_as_written(store):
    store.transition_ti(KEY, expected=[None], state=S.QUEUED,
                        fields={"try_number": 1, "try_id": "t1", "priority_weight": 5})
    started = store.start_ti(KEY, try_id="t1", fields={"start_date": T0, "lease_expires_at": T0, "hostname": None})
    assert started is not None and started.state == S.RUNNING and started.try_id == "t1"
    assert started.start_date == T0 and started.priority_weight == 5 and started.try_number == 1
    assert store.get_ti(KEY) == started
    assert store.start_ti(KEY, try_id="t1", fields={"start_date": T0}) is None  # already running: a duplicate
    store.transition_ti(KEY, expected=[S.RUNNING], state=S.QUEUED, fields={"try_id": "t2"})
    assert store.start_ti(KEY, try_id="t1", fields={"start_date": T0}) is None  # superseded by another try


def test_a_start_that_meets_a_claims_transaction_on_its_item_is_sent_again(store, monkeypatch):
    """DynamoDB rejects a single write on an item a transaction holds (``TransactionConflictException``, which
    botocore does not retry): a start meeting another scheduler's claim batch is the same start a moment later."""
    from botocore.exceptions import ClientError
    from pynamodb.exceptions import UpdateError
    from pynamodb.models import Model

    from updraft.store import writes

    store.transition_ti(KEY, expected=[None], state=S.QUEUED, fields={"try_number": 1, "try_id": "t1"})
    update, rejected = Model.update, []

    def held_once(row, *args, **kwargs):
        if not rejected:
            rejected.append(row)
            raise UpdateError("Failed to update item", ClientError(
                {"Error": {"Code": "TransactionConflictException", "Message": "Transaction is ongoing"}}, "UpdateItem"))
        return update(row, *args, **kwargs)

    monkeypatch.setattr(Model, "update", held_once)
    monkeypatch.setattr(writes.time, "sleep", lambda _: None)
    started = store.start_ti(KEY, try_id="t1", fields={"start_date": T0})
    assert rejected and started is not None and started.state == S.RUNNING
    assert store.get_ti(KEY).state == S.RUNNING


def test_a_run_and_its_dags_row_come_in_one_request_and_unprocessed_keys_are_asked_again(store, monkeypatch):
    from tests.unit.store.store_helpers import dag_doc, parsed_file
    from updraft.scheduling.commands.dag_registration import register_parsed_file

    register_parsed_file(store, parsed_file("a.py", dag_doc("d")), now=T0)
    r = run()
    store.create_run(r)
    assert store.get_run_and_dag_meta("d", r.run_id) == (store.get_run("d", r.run_id), store.get_dag_meta("d"))
    assert store.get_run_and_dag_meta("d", "nope") == (None, store.get_dag_meta("d"))
    assert store.get_run_and_dag_meta("nope", "nope") == (None, None)

    connection = store.models.run._get_connection()
    original = connection.batch_get_item
    calls = []

    def throttled_once(keys, **kwargs):  # DynamoDB answers part of a batch under throttling
        calls.append(len(keys))
        data = original(keys, **kwargs)
        if len(calls) == 1:
            table = store.models.run.Meta.table_name
            data["Responses"][table] = data["Responses"][table][:1]
            data["UnprocessedKeys"] = {table: {"Keys": keys[1:]}}
        return data

    monkeypatch.setattr(connection, "batch_get_item", throttled_once)
    _this_thread_s_sleeps(monkeypatch)
    assert store.get_run_and_dag_meta("d", r.run_id) == (store.get_run("d", r.run_id), store.get_dag_meta("d"))
    assert calls == [2, 1]


def _this_thread_s_sleeps(monkeypatch) -> list[float]:
    """The backoffs this test's thread asks for, recorded and not slept. ``time.sleep`` is the process's: another
    thread (a try's live log writer, started by an earlier test in this process) still sleeps for real."""
    import threading
    import time

    sleeps: list[float] = []
    mine, sleep = threading.get_ident(), time.sleep
    monkeypatch.setattr("updraft.store.runs.time.sleep",
                        lambda seconds: sleeps.append(seconds) if threading.get_ident() == mine else sleep(seconds))
    return sleeps


def test_a_read_of_several_batches_waits_only_after_dynamodb_left_keys(store, monkeypatch):
    """A hundred keys a BatchGetItem: the next batch of new keys goes at once; only keys DynamoDB left unprocessed
    are asked again after a backoff."""
    r = run()
    store.create_run(r)
    keys = [TIKey("d", r.run_id, f"t{i}") for i in range(250)]
    for key in keys[:5]:
        store.transition_ti(key, expected=[None], state=S.SCHEDULED)
    sleeps = _this_thread_s_sleeps(monkeypatch)
    assert set(store.get_run_meta_and_tis("d", r.run_id, keys)[2]) == set(keys[:5])
    assert sleeps == []

    connection = store.models.run._get_connection()
    original = connection.batch_get_item
    calls = []

    def throttled_first(batch, **kwargs):
        calls.append(len(batch))
        data = original(batch, **kwargs)
        if len(calls) == 1:
            data["UnprocessedKeys"] = {store.models.run.Meta.table_name: {"Keys": batch[-10:]}}
        return data

    monkeypatch.setattr(connection, "batch_get_item", throttled_first)
    assert set(store.get_run_meta_and_tis("d", r.run_id, keys)[2]) == set(keys[:5])
    assert len(sleeps) == 1 and sum(calls) == 253 + 10


def test_dag_rows_are_read_in_one_batch_and_missing_ones_left_out(store):
    from tests.unit.store.store_helpers import dag_doc, parsed_file
    from updraft.scheduling.commands.dag_registration import register_parsed_file

    register_parsed_file(store, parsed_file("a.py", dag_doc("a"), dag_doc("b")), now=T0)
    metas = store.get_dag_metas(["a", "b", "nope", "a"])
    assert metas == {"a": store.get_dag_meta("a"), "b": store.get_dag_meta("b")}
    assert store.get_dag_metas([]) == {}
