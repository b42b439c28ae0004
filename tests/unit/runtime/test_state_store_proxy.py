"""The state stores through the store proxy: a try reaches only its own task instance's state and the assets its
task has as inlets or outlets; forged scopes are refused before they reach the store. And the accessors task
code gets (``task_state_store``, ``asset_state_store``), as Airflow 3.3.2's."""

from __future__ import annotations

import asyncio
import datetime as dt
import pickle
from types import SimpleNamespace
from typing import Any

import pytest

from tests.unit.runtime.test_store_proxy import NOW, OTHER, OWN, RecordingStore, _key
from updraft.model.records import TIKey
from updraft.runtime.state_stores import (
    NEVER_EXPIRE,
    AssetStateStoreAccessors,
    TaskStateStoreAccessor,
    expires_at,
    granted_asset_names,
)
from updraft.runtime.store_proxy import TryScope, serve_call
from updraft.sdk.assets import Asset, AssetAlias, AssetNameRef, AssetUriRef
from updraft.serialization.encoding import TaggedValue

ORDERS = "orders/daily"


def _call(store: Any, method: str, *args: Any, writes: bool = True, assets: frozenset[str] | None = None) -> dict:
    scope = TryScope(OWN, "token-1", lambda: NOW, try_number=2, writes=writes,
                     state_assets=frozenset({ORDERS}) if assets is None else assets)
    return pickle.loads(serve_call(store, scope, {"call": method, "args": list(args)}))


def _refused(reply: dict, store: RecordingStore, text: str) -> None:
    assert reply["error"][0] == "ScopeError", reply
    assert text in reply["error"][1], reply
    assert store.calls == []


def test_the_try_reaches_its_own_task_state_stamped_by_the_worker() -> None:
    store = RecordingStore()
    expiry = (NOW + dt.timedelta(hours=1)).isoformat()
    assert _call(store, "set_task_state", _key(OWN), "job_id", "job-1", expiry) == {"ok": None}
    assert _call(store, "get_task_state", _key(OWN), "job_id")["ok"] == "get_task_state-answer"
    assert _call(store, "clear_task_state", _key(OWN)) == {"ok": "clear_task_state-answer"}
    assert store.calls[0] == ("set_task_state", (OWN, "job_id", "job-1"),
                              {"expires_at": NOW + dt.timedelta(hours=1), "now": NOW})
    assert store.calls[1] == ("get_task_state", (OWN, "job_id"), {"now": NOW})  # expiry on the worker's clock


@pytest.mark.parametrize(("method", "args", "text"), [
    ("get_task_state", [_key(OTHER), "job_id"], "may not read the task state"),  # another task of the run
    ("get_task_state", [_key(TIKey(OWN.dag_id, "manual__2", OWN.task_id, -1)), "k"], "may not read the task state"),
    ("get_task_state", [_key(TIKey(OWN.dag_id, OWN.run_id, OWN.task_id, 0)), "k"], "may not read the task state"),
    ("set_task_state", [_key(OTHER), "k", 1, None], "may not write task instance"),
    ("set_task_state", [_key(TIKey(OWN.dag_id, OWN.run_id, OWN.task_id, 3)), "k", 1, None],
     "may not write task instance"),  # another map index
    ("delete_task_state", [_key(OTHER), "k"], "may not write task instance"),
    ("clear_task_state", [_key(TIKey("other_dag", OWN.run_id, OWN.task_id, -1))], "may not write task instance"),
    ("set_task_state", [_key(OWN), "", 1, None], "non-empty string"),
    ("set_task_state", [_key(OWN), "k", None, None], "Cannot set value as None"),
    ("set_task_state", [_key(OWN), "k", 1, "2026-01-01T00:00:00"], "time zone"),  # a naive expiry
    ("set_task_state", [["etl", "manual__1", "load"], "k", 1, None], "not a task instance key"),
    ("get_asset_state", ["someone_elses_asset", "watermark"], "has no inlet or outlet asset"),
    ("set_asset_state", ["someone_elses_asset", "watermark", "x"], "has no inlet or outlet asset"),
    ("clear_asset_state", ["someone_elses_asset"], "has no inlet or outlet asset"),
    ("set_asset_state", [{"name": ORDERS}, "watermark", "x"], "must be a string"),
    ("set_asset_state", [ORDERS, "watermark", None], "Cannot set value as None"),
])
def test_forged_state_store_scopes_are_refused(method: str, args: list, text: str) -> None:
    store = RecordingStore()
    _refused(_call(store, method, *args), store, text)


@pytest.mark.parametrize(("method", "args"), [
    ("set_task_state", [_key(OWN), "k", 1, None]),
    ("delete_task_state", [_key(OWN), "k"]),
    ("clear_task_state", [_key(OWN)]),
    ("set_asset_state", [ORDERS, "k", 1]),
    ("delete_asset_state", [ORDERS, "k"]),
    ("clear_asset_state", [ORDERS]),
])
def test_callbacks_and_triggers_only_read_state(method: str, args: list) -> None:
    store = RecordingStore()
    assert _call(store, method, *args, writes=False)["error"][0] == "ScopeError"
    assert store.calls == []
    assert "ok" in _call(store, "get_task_state", _key(OWN), "k", writes=False)
    assert "ok" in _call(store, "get_asset_state", ORDERS, "k", writes=False)


def test_the_asset_writer_is_the_worker_s_try_not_what_the_child_says() -> None:
    store = RecordingStore()
    assert _call(store, "set_asset_state", ORDERS, "watermark", "2026") == {"ok": None}
    assert store.calls == [("set_asset_state", (ORDERS, "watermark", "2026"), {"now": NOW, "writer": OWN})]


# Two assets beyond the task's own: one named by its URI, one with an event emitted through the alias an_alias.
ASSETS = [SimpleNamespace(asset_id=1, name="named_by_uri", uri="s3://w/by-uri"),
          SimpleNamespace(asset_id=2, name="via_alias", uri="via_alias")]
EVENTS = {1: [SimpleNamespace(source_aliases=[])], 2: [SimpleNamespace(source_aliases=["an_alias"])]}


class KnownAssets:
    """The assets and their events, as the store (or the proxy) lists them."""

    def list_assets(self) -> list[Any]:
        return ASSETS

    def list_asset_events(self, asset_id: int) -> list[Any]:
        return EVENTS.get(asset_id, [])


class DagVersionStore(KnownAssets, RecordingStore):
    """Answers the run and its DAG version, whose task has inlets and outlets of every kind."""

    def __init__(self) -> None:
        super().__init__()
        inlets = [TaggedValue("asset", {"asset": {"name": ORDERS, "uri": "s3://w/orders", "group": "asset"}}),
                  TaggedValue("asset", {"asset_ref": {"name": "by_name"}}),
                  TaggedValue("asset", {"asset_ref": {"uri": "s3://w/by-uri"}}),
                  TaggedValue("asset", {"asset_ref": {"uri": "s3://w/unknown"}}),
                  TaggedValue("asset", {"alias": {"name": "an_alias", "group": "asset"}})]
        outlets = [TaggedValue("asset", {"asset": {"name": "out", "uri": "out", "group": "asset"}})]
        self.task = SimpleNamespace(inlets=inlets, outlets=outlets)

    def get_run(self, dag_id: str, run_id: str) -> Any:
        return SimpleNamespace(dag_id=dag_id, dag_hash="h1")

    def get_serialized_dag(self, dag_id: str, dag_hash: str) -> Any:
        return SimpleNamespace(task_dict={OWN.task_id: self.task})


def test_the_grant_is_the_task_s_inlets_and_outlets_read_from_the_run_s_dag_version() -> None:
    store = DagVersionStore()
    granted = frozenset({ORDERS, "by_name", "named_by_uri", "via_alias", "out"})
    assert granted_asset_names(store.task, store) == granted
    scope = TryScope(OWN, "token-1", lambda: NOW, try_number=2)
    reply = pickle.loads(serve_call(store, scope, {"call": "get_asset_state", "args": ["named_by_uri", "k"]}))
    assert reply == {"ok": "get_asset_state-answer"}
    assert scope.state_assets == granted  # read once per try
    reply = pickle.loads(serve_call(store, scope, {"call": "get_asset_state", "args": ["an_alias", "k"]}))
    assert reply["error"][0] == "ScopeError"  # the alias itself holds no state


class FakeState(KnownAssets):
    """The state methods the accessors call, in memory (the child's proxy and DynamoStore have them)."""

    def __init__(self) -> None:
        self.task: dict[tuple[TIKey, str], tuple[Any, Any]] = {}
        self.assets: dict[tuple[str, str], Any] = {}

    def now(self) -> dt.datetime:
        return NOW

    def get_task_state(self, key: TIKey, state_key: str, *, now: dt.datetime) -> Any:
        found = self.task.get((key, state_key))
        return None if found is None else SimpleNamespace(value=found[0])

    def set_task_state(self, key: TIKey, state_key: str, value: Any, *, expires_at: Any, now: Any) -> None:
        self.task[(key, state_key)] = (value, expires_at)

    def get_asset_state(self, name: str, state_key: str) -> Any:
        found = self.assets.get((name, state_key))
        return None if found is None else SimpleNamespace(value=found)

    def set_asset_state(self, name: str, state_key: str, value: Any, *, now: Any, writer: Any) -> None:
        self.assets[(name, state_key)] = value


def test_task_accessor_retention_as_airflow(monkeypatch: pytest.MonkeyPatch) -> None:
    state = FakeState()
    accessor = TaskStateStoreAccessor(state, OWN)
    assert accessor.get("job_id", default="none yet") == "none yet"
    accessor.set("job_id", "job-1", retention=NEVER_EXPIRE)
    accessor.set("status", "running", retention=dt.timedelta(hours=6))
    accessor.set("submitted_at", "2026")
    assert accessor.get("job_id") == "job-1"
    assert state.task[(OWN, "job_id")] == ("job-1", None)
    assert state.task[(OWN, "status")] == ("running", NOW + dt.timedelta(hours=6))
    assert state.task[(OWN, "submitted_at")] == ("2026", NOW + dt.timedelta(days=30))  # the default retention
    monkeypatch.setenv("AIRFLOW__STATE_STORE__DEFAULT_RETENTION_DAYS", "0")
    assert expires_at(None, NOW) is None
    monkeypatch.setenv("AIRFLOW__STATE_STORE__DEFAULT_RETENTION_DAYS", "-1")
    with pytest.raises(ValueError, match="default_retention_days must be >= 0"):
        accessor.set("k", "v")
    with pytest.raises(ValueError, match="Cannot set value as None"):
        accessor.set("k", None)
    assert not hasattr(accessor, "aget")  # Airflow 3.3.2's task accessor is synchronous only


def test_asset_accessors_cover_concrete_inlets_and_outlets_only() -> None:
    state = FakeState()
    orders, out = Asset(name=ORDERS, uri="s3://w/orders"), Asset(name="out")
    accessors = AssetStateStoreAccessors(state, OWN, [orders, AssetAlias("an_alias"), AssetUriRef("s3://w/by-uri")],
                                         [out, orders])
    accessors[orders].set("watermark", "2026")
    accessors[AssetUriRef("s3://w/by-uri")].set("k", 1)  # kept under the asset's name
    assert accessors[AssetNameRef(ORDERS)].get("watermark") == "2026"
    assert state.assets == {(ORDERS, "watermark"): "2026", ("named_by_uri", "k"): 1}
    accessors[Asset(name="via_alias")].set("k", 2)  # an asset the alias inlet stands for
    with pytest.raises(KeyError, match="not in this task's inlets or outlets"):
        accessors[Asset(name="elsewhere")]
    with pytest.raises(ValueError, match="Task has 4 concrete inlets and outlets"):
        accessors.get("watermark")

    single = AssetStateStoreAccessors(state, OWN, [orders])
    assert single.get("watermark") == "2026"
    asyncio.run(single.aset("total_runs", 1))
    assert asyncio.run(single.aget("total_runs")) == 1


@pytest.mark.parametrize(("variable", "value"), [
    ("AIRFLOW__WORKERS__STATE_STORE_BACKEND", "mypackage.state.S3StateBackend"),
    ("AIRFLOW__STATE_STORE__BACKEND", "mypackage.state.CustomStoreBackend"),
])
def test_a_custom_state_backend_is_refused_by_name_when_state_is_used(monkeypatch: pytest.MonkeyPatch,
                                                                      variable: str, value: str) -> None:
    monkeypatch.setenv(variable, value)
    state = FakeState()
    accessor = TaskStateStoreAccessor(state, OWN)  # built for every try: only its use is refused
    with pytest.raises(NotImplementedError, match=variable):
        accessor.get("job_id")
    with pytest.raises(NotImplementedError, match="custom state store backends are not supported"):
        AssetStateStoreAccessors(state, OWN, [Asset(name=ORDERS)]).set("k", 1)
    assert state.task == {} and state.assets == {}


def test_dag_files_import_the_names_where_airflow_has_them() -> None:
    from airflow.sdk import NEVER_EXPIRE as FROM_SDK
    from airflow.sdk.execution_time.context import NEVER_EXPIRE as FROM_CONTEXT
    from airflow.sdk.execution_time.context import AssetStateStoreAccessors as Accessors
    from airflow.sdk.execution_time.context import TaskStateStoreAccessor as Accessor

    assert FROM_SDK is FROM_CONTEXT is NEVER_EXPIRE
    assert (Accessor, Accessors) == (TaskStateStoreAccessor, AssetStateStoreAccessors)
