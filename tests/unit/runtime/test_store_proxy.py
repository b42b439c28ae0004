"""The store proxy's allow-list: what a try's child may ask of the worker, fenced to its own try."""

from __future__ import annotations

import datetime as dt
import inspect
import pickle
from typing import Any

import pytest

from updraft.model.records import TIKey
from updraft.runtime.store_proxy import ALLOWED, ProxySecretsBackend, StoreProxy, TryScope, serve_call

NOW = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
OWN = TIKey("etl", "manual__1", "load", -1)
OTHER = TIKey("etl", "manual__1", "extract", -1)


class RecordingStore:
    """Records every call; answers reads with a marker."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            return True if name == "set_rendered_fields" else f"{name}-answer"
        return call


def _call(store: RecordingStore, method: str, *args: Any) -> dict:
    scope = TryScope(OWN, "token-1", lambda: NOW)
    return pickle.loads(serve_call(store, scope, {"call": method, "args": list(args)}))


def _key(key: TIKey) -> list:
    return [key.dag_id, key.run_id, key.task_id, key.map_index]


def test_the_try_writes_its_own_xcoms_and_rendered_fields_stamped_by_the_worker() -> None:
    store = RecordingStore()
    assert _call(store, "put_xcom", _key(OWN), "k", {"a": 1}, None) == {"ok": None}
    assert _call(store, "set_rendered_fields", _key(OWN), "token-1", {"f": "v"}) == {"ok": True}
    assert _call(store, "clear_xcoms", _key(OWN)) == {"ok": "clear_xcoms-answer"}
    assert store.calls[0] == ("put_xcom", (OWN, "k", {"a": 1}), {"now": NOW, "shown": None})
    assert store.calls[1] == ("set_rendered_fields", (OWN,), {"try_id": "token-1", "rendered_fields": {"f": "v"}})


@pytest.mark.parametrize(("method", "args"), [
    ("put_xcom", [_key(OTHER), "k", 1, None]),  # another task instance's XCom
    ("put_xcom", [_key(TIKey("other_dag", "manual__1", "load", -1)), "k", 1, None]),
    ("clear_xcoms", [_key(OTHER)]),
    ("set_rendered_fields", [_key(OWN), "someone-elses-token", {}]),  # the right key, a forged try token
    ("set_rendered_fields", [_key(OTHER), "token-1", {}]),
    ("put_xcom", [["etl", "manual__1", "load"], "k", 1, None]),  # not a key
    ("put_xcom", [_key(OWN), "k"]),  # wrong arity
    ("finish_ti", [_key(OWN)]),  # not on the allow-list: the scheduler's business
    ("set_paused", ["etl", True]),
    ("__class__", []),
])
def test_a_forged_or_unknown_call_is_refused_and_reaches_no_store(method: str, args: list) -> None:
    store = RecordingStore()
    reply = _call(store, method, *args)
    assert reply["error"][0] == "ScopeError", reply
    assert store.calls == []


def test_reads_are_open_as_in_airflow() -> None:
    store = RecordingStore()
    assert _call(store, "get_xcom", _key(OTHER), "return_value")["ok"] == "get_xcom-answer"
    assert _call(store, "get_run", "another_dag", "r")["ok"] == "get_run-answer"
    assert _call(store, "get_variable", "v")["ok"] == "get_variable-answer"
    assert _call(store, "now") == {"ok": NOW}


def test_the_proxy_offers_exactly_the_allow_list() -> None:
    """One allow-list: every call the child's proxies make is served, and every served call has a proxy."""
    proxied = {name for cls in (StoreProxy, ProxySecretsBackend) for name, _ in inspect.getmembers(cls)
               if not name.startswith("_") and callable(getattr(cls, name))}
    made = {"backend_variable", "backend_connection", "backend_config", "send_email"}  # the backend's, the sender's
    assert (proxied - {"get_conn_value", "get_config", "secrets_backend"}) | made == set(ALLOWED)
