"""What the store sends to DynamoDB: the request counts its docstring promises, placeholders for every name,
and a table whose definition comes from the one shared spec."""

from __future__ import annotations

import dataclasses
import re
from unittest import mock

import pendulum
import pytest
from botocore.client import BaseClient
from store_helpers import dag_doc, parsed_file

import updraft.store
from updraft.model.records import DagRun, TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.dag_registration import register_parsed_file, remove_dag_file, set_paused
from updraft.store.config import StoreConfig
from updraft.store.models import build_models
from updraft.store.tables import TABLE, WAITING_INDEX, add_missing_indexes, create_table, create_table_kwargs
from updraft.timetables.base import DagRunInfo, DataInterval

NOW = pendulum.datetime(2024, 1, 3, tz="UTC")
T0 = pendulum.datetime(2024, 1, 1, tz="UTC")
S = TaskInstanceState


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict]]:
    """Every DynamoDB request the store makes, as (operation, params)."""
    recorded: list[tuple[str, dict]] = []
    original = BaseClient._make_api_call

    def record(self, operation, params):
        if self.meta.service_model.service_name == "dynamodb":
            recorded.append((operation, params))
        return original(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", record)
    return recorded


def count(calls, action) -> list[str]:
    calls.clear()
    action()
    return [op for op, _ in calls]


def test_hot_paths_cost_what_the_access_pattern_table_says(store, calls):
    key = TIKey("d", "r1", "t", -1)
    store.put_version("d", "h", dag_doc("d"), NOW)
    run = DagRun("d", "r1", "scheduled", "h", logical_date=T0, run_after=T0)
    shards = store.config.index_shards
    # The version the run is pinned to sizes its partition: read once a process, as every reader keeps versions.
    assert count(calls, lambda: store.create_run(run)) == ["GetItem", "PutItem"]
    assert count(calls, lambda: store.create_run(dataclasses.replace(run, run_id="r2"))) == ["PutItem"]
    assert count(calls, lambda: store.get_run("d", "r1")) == ["GetItem"]
    assert count(calls, lambda: store.set_run_state("d", "r1", expected=[DagRunState.QUEUED],
                                                    state=DagRunState.RUNNING, now=NOW)) == ["UpdateItem"]
    assert count(calls, store.active_runs) == ["Query"] * shards
    assert count(calls, lambda: store.transition_ti(key, expected=[None], state=S.SCHEDULED)) == ["PutItem"]
    assert count(calls, lambda: store.transition_ti(key, expected=[S.SCHEDULED], state=S.QUEUED,
                                                    fields={"try_id": "x"})) == ["UpdateItem"]
    assert count(calls, lambda: store.heartbeat(key, try_id="x", lease_expires_at=NOW)) == ["UpdateItem"]
    assert count(calls, lambda: store.get_run_tis("d", "r1")) == ["Query"]
    assert count(calls, lambda: store.get_ti(key)) == ["GetItem"]
    assert count(calls, lambda: store.previous_run("d", NOW)) == ["Query"]
    assert count(calls, lambda: store.set_pool("p", 2)) == ["GetItem", "PutItem"]
    assert count(calls, lambda: store.pool_slots("p")) == ["GetItem"]

def test_parse_costs(store, calls):
    doc = dag_doc("d", schedule="@daily", is_paused_upon_creation=False)
    parsed = parsed_file("a.py", doc)
    # New DAG: file read, meta read, version put, meta put, file put.
    assert count(calls, lambda: register_parsed_file(store, parsed, now=NOW)) == [
        "GetItem", "GetItem", "PutItem", "PutItem", "PutItem"]
    # The same event again: two reads, no writes.
    assert count(calls, lambda: register_parsed_file(store, parsed, now=NOW)) == ["GetItem", "GetItem"]
    meta = store.get_dag_meta("d")
    assert count(calls, lambda: store.get_serialized_dag("d", meta.dag_hash)) == ["GetItem"]
    assert count(calls, lambda: store.get_serialized_dag("d", meta.dag_hash)) == []
    assert count(calls, lambda: store.due_dags(NOW)) == ["Query"] * store.config.index_shards
    info = DagRunInfo.exact(meta.next_dagrun_logical_date.add(days=1))
    assert count(calls, lambda: store.advance_next_dagrun(
        "d", expected_logical_date=meta.next_dagrun_logical_date, next_info=info,
        last_automated=DataInterval.exact(meta.next_dagrun_logical_date))) == ["UpdateItem"]


_EXPRESSION_KEYS = ("UpdateExpression", "ConditionExpression", "KeyConditionExpression", "FilterExpression",
                    "ProjectionExpression")
_ALLOWED_WORDS = {"SET", "REMOVE", "ADD", "DELETE", "AND", "OR", "NOT", "IN", "BETWEEN", "attribute_exists",
                  "attribute_not_exists", "attribute_type", "begins_with", "contains", "size", "if_not_exists",
                  "list_append"}


def test_every_attribute_name_in_every_expression_is_a_placeholder(store, calls):
    """DynamoDB has hundreds of reserved words (state, limit, name, owner, status, key, data, size...): the
    store never spells an attribute name inside an expression."""
    key = TIKey("d", "r", "state", -1)
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily")), now=NOW)
    set_paused(store, "d", False, now=NOW)
    store.due_dags(NOW)
    store.list_dags()
    store.create_run(DagRun("d", "r", "manual", "h", logical_date=T0))
    store.set_run_state("d", "r", expected=[DagRunState.QUEUED], state=DagRunState.SUCCESS, now=NOW)
    store.set_run_note("d", "r", "n")
    store.list_runs("d")
    store.previous_run("d", NOW)
    store.transition_ti(key, expected=[None, S.SCHEDULED], state=S.QUEUED, fields={"try_id": "t", "note": None})
    store.transition_ti(key, expected=[S.QUEUED], state=S.RUNNING, expected_try_id="t")
    store.heartbeat(key, try_id="t", lease_expires_at=NOW)
    store.get_run_tis("d", "r")
    store.set_pool("name", 2, "size")
    store.set_pool("name", 3)
    store.list_pools()
    store.put_xcom(key, "key", 1, now=NOW)
    store.list_xcoms("d", "r", "state")
    remove_dag_file(store, "a.py")
    store.delete_pool("name")
    expressions = [params[k] for _, params in calls for k in _EXPRESSION_KEYS if k in params]
    assert len(expressions) > 25
    for expression in expressions:
        words = set(re.findall(r"(?<![#:\w])[A-Za-z_]\w*", expression))
        assert words <= _ALLOWED_WORDS, expression


def test_create_table_is_idempotent_and_matches_the_spec(aws, boto_session):
    config = StoreConfig(table_name="spec-check", region="us-east-1")
    client = boto_session.client("dynamodb")
    assert create_table(config, client=client) is True
    assert create_table(config, client=client) is False
    table = client.describe_table(TableName="spec-check")["Table"]
    expected = create_table_kwargs("spec-check")
    assert table["KeySchema"] == expected["KeySchema"]
    assert {g["IndexName"]: (g["KeySchema"], g["Projection"]) for g in table["GlobalSecondaryIndexes"]} == {
        g["IndexName"]: (g["KeySchema"], g["Projection"]) for g in expected["GlobalSecondaryIndexes"]}
    assert [i["IndexName"] for i in table["LocalSecondaryIndexes"]] == ["runs_by_date"]


@pytest.mark.parametrize(("answered", "statuses", "described"), [
    ("CREATING", ["CREATING", "CREATING", "ACTIVE"], 3),  # DynamoDB: usable only once ACTIVE
    ("ACTIVE", [], 0),  # moto makes a table ACTIVE at once: nothing to wait for
])
def test_create_table_waits_until_the_table_is_active(aws, boto_session, answered, statuses, described):
    client = boto_session.client("dynamodb")
    asked: list[str] = []
    answers = iter(statuses)

    class Answering:
        exceptions = client.exceptions

        def create_table(self, **kwargs):
            return {"TableDescription": {**client.create_table(**kwargs)["TableDescription"], "TableStatus": answered}}

        def describe_table(self, TableName):
            asked.append(TableName)
            return {"Table": {"TableStatus": next(answers)}}

        def __getattr__(self, name):
            return getattr(client, name)

    # The module's ``time`` is replaced, not ``time.sleep`` itself: that is every thread's, and a thread another
    # test left in this worker (a loop that sleeps) would spin on the mock and count too.
    slept = mock.Mock()
    with mock.patch("updraft.store.tables.time", mock.Mock(sleep=slept)):
        assert create_table(StoreConfig(table_name="new", region="us-east-1"), client=Answering()) is True
    assert asked == ["new"] * described and slept.call_count == max(described - 1, 0)


def test_a_table_kept_from_an_older_version_gains_the_indexes_added_since(aws, boto_session):
    # Local mode keeps its table across restarts: one made before the waiting index existed gains it at start,
    # and the waiting index's Query then answers instead of failing for a missing index.
    config = StoreConfig(table_name="older", region="us-east-1")
    client = boto_session.client("dynamodb")
    older = dataclasses.replace(TABLE, global_indexes=tuple(ix for ix in TABLE.global_indexes
                                                             if ix.name != WAITING_INDEX))
    client.create_table(**create_table_kwargs("older", older))
    assert create_table(config, client=client) is False
    table = client.describe_table(TableName="older")["Table"]
    assert {g["IndexName"] for g in table["GlobalSecondaryIndexes"]} == {ix.name for ix in TABLE.global_indexes}
    assert add_missing_indexes(client, "older") == []  # nothing left to add: idempotent
    client.query(TableName="older", IndexName=WAITING_INDEX, KeyConditionExpression="waiting_pk = :r",
                 ExpressionAttributeValues={":r": {"S": "RUN#d#r"}})


def test_models_use_the_specs_index_names_and_keys():
    models = build_models(StoreConfig(table_name="x", region="us-east-1"))
    declared = {}
    for model in (models.dag_meta, models.run, models.limit, models.file, models.task_instance):
        for name, index in model._indexes.items():
            declared[name] = sorted(a.attr_name for a in index.Meta.attributes.values())
    spec = {ix.name: sorted([ix.partition_key.name, ix.sort_key.name])
            for ix in (*TABLE.global_indexes, *TABLE.local_indexes)}
    # The waiting index is queried raw (store.waiting): its keys are attributes of the task instance's item.
    assert spec.pop(WAITING_INDEX) == sorted(a.attr_name for a in (models.task_instance.waiting_pk,
                                                                    models.task_instance.waiting_sk))
    assert declared == spec


def test_access_patterns_are_written_down():
    doc = updraft.store.__doc__
    for operation in ("register_parsed_file", "due_dags", "active_runs", "pool_slots", "transition_ti",
                      "previous_run", "list_import_errors", "get_serialized_dag"):
        assert operation in doc


def test_a_creation_race_lost_costs_one_write_and_a_cleared_instance_two(store, calls):
    key = TIKey("d", "r1", "raced", -1)
    store.create_run(DagRun("d", "r1", "scheduled", "h"))  # its instances' partition is known from here on
    assert count(calls, lambda: store.create_ti(key, state=S.SCHEDULED)) == ["PutItem"]
    # Another scheduler created it first: the refused put returns the item, whose state says so (no second write).
    assert not store.create_ti(key, state=S.SCHEDULED)
    assert count(calls, lambda: store.create_ti(key, state=S.SCHEDULED)) == ["PutItem"]
    # A cleared instance (no state) is updated instead, keeping its try number.
    assert store.transition_ti(key, expected=[S.SCHEDULED], state=S.QUEUED, fields={"try_id": "x", "try_number": 3})
    assert store.reset_ti(key, expected=S.QUEUED, expected_try_id="x", fields={})
    assert count(calls, lambda: store.create_ti(key, state=S.SCHEDULED)) == ["PutItem", "UpdateItem"]
    assert (store.get_ti(key).state, store.get_ti(key).try_number) == (S.SCHEDULED, 3)
