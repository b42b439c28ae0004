"""Forged calls a try's child may send the worker, each refused before it reaches the store (issue 18).

The child runs user code, so every field of its calls and of its result is the attacker's: outlet events for
another task, run or try; cross-DAG calls beyond what Airflow's execution API lets a task make; a deferral written
for another try; XCom writes for another task instance; any write at all from a callback's or a trigger's scope.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from tests.unit.runtime.test_store_proxy import NOW, OTHER, OWN, RecordingStore, _key
from updraft.model.records import TIKey
from updraft.runtime.store_proxy import TryScope, serve_call
from updraft.runtime.supervisor import ChildFailed, _result

ANOTHER_RUN = TIKey(OWN.dag_id, "manual__2", OWN.task_id, OWN.map_index)
ANOTHER_MAP_INDEX = TIKey(OWN.dag_id, OWN.run_id, OWN.task_id, 3)


def _call(store: RecordingStore, method: str, *args: Any, writes: bool = True) -> dict:
    scope = TryScope(OWN, "token-1", lambda: NOW, try_number=2, writes=writes)
    return pickle.loads(serve_call(store, scope, {"call": method, "args": list(args)}))


def _refused(reply: dict, store: RecordingStore, text: str) -> None:
    assert reply["error"][0] == "ScopeError", reply
    assert text in reply["error"][1], reply
    assert store.calls == []


def test_the_try_keeps_its_own_outlet_events_under_its_own_try_number() -> None:
    store = RecordingStore()
    assert _call(store, "put_outlet_events", _key(OWN), 2, [{"uri": "s3://b/k"}]) == {"ok": None}
    assert store.calls == [("put_outlet_events", (OWN, 2, [{"uri": "s3://b/k"}], NOW), {})]


@pytest.mark.parametrize(("key", "try_number", "text"), [
    (OTHER, 2, "may not write task instance"),  # another task of the run
    (ANOTHER_RUN, 2, "may not write task instance"),  # the same task in another run
    (ANOTHER_MAP_INDEX, 2, "may not write task instance"),  # another mapped instance
    (OWN, 1, "may only keep its own outlet events"),  # an earlier try's number (its events were published)
    (OWN, 3, "may only keep its own outlet events"),
    (OWN, None, "may only keep its own outlet events"),
])
def test_outlet_events_for_another_task_run_or_try_are_refused(key: TIKey, try_number: Any, text: str) -> None:
    store = RecordingStore()
    _refused(_call(store, "put_outlet_events", _key(key), try_number, [{"uri": "s3://b/k"}]), store, text)


@pytest.mark.parametrize("method", ["clear_run", "runs", "_latest", "_states", "__init__", "store", "nudge"])
def test_cross_dag_calls_beyond_the_execution_apis_are_refused(method: str) -> None:
    """``CrossDag``'s other methods (clearing a run, raw run reads, its store) are the worker's, not the task's."""
    store = RecordingStore()
    _refused(_call(store, "cross_dag", method, ["other_dag"], {}), store, "is not allowed from task code")


def test_a_malformed_cross_dag_call_is_refused() -> None:
    store = RecordingStore()
    _refused(_call(store, "cross_dag", "trigger", "other_dag", {}), store, "malformed cross-DAG call")


@pytest.mark.parametrize(("method", "args"), [
    ("put_xcom", [_key(OWN), "k", 1, None]),
    ("clear_xcoms", [_key(OWN)]),
    ("set_rendered_fields", [_key(OWN), "token-1", {}]),
    ("put_outlet_events", [_key(OWN), 2, []]),
    ("cross_dag", ["trigger", ["other_dag"], {"run_id": "r", "conf": None, "logical_date": None}]),
])
def test_a_callback_or_trigger_scope_writes_nothing_even_its_own(method: str, args: list) -> None:
    store = RecordingStore()
    reply = _call(store, method, *args, writes=False)
    assert reply["error"][0] == "ScopeError" and store.calls == [], reply


def test_a_callback_or_trigger_scope_still_reads_other_dags() -> None:
    store = RecordingStore()
    reply = _call(store, "cross_dag", "run_state", ["other_dag", "r"], {}, writes=False)
    assert reply.get("error", [""])[0] != "ScopeError", reply
    assert store.calls[0][:2] == ("get_run", ("other_dag", "r"))  # the read reached the store


@pytest.mark.parametrize(("key", "xcom_key"), [
    (OTHER, "return_value"), (ANOTHER_RUN, "return_value"), (ANOTHER_MAP_INDEX, "k"),
])
def test_xcom_writes_for_another_task_instance_are_refused(key: TIKey, xcom_key: str) -> None:
    store = RecordingStore()
    reply = _call(store, "put_xcom", [key.dag_id, key.run_id, key.task_id, key.map_index], xcom_key, 1, None)
    assert reply["error"][0] == "ScopeError" and store.calls == [], reply


DEFERRAL = {"classpath": "airflow.providers.standard.triggers.temporal.DateTimeTrigger", "kwargs": {},
            "next_method": "execute_complete", "next_kwargs": None, "times_out": False, "end_from_trigger": False,
            "kind": "time", "resume_at": NOW.isoformat(), "exponential_backoff": False, "max_wait_s": None}


@pytest.mark.parametrize("forged", [{"try_id": "another-try"}, {"key": ["etl", "manual__1", "extract", -1]},
                                    {"task_id": "extract"}, {"try_number": 1}])
def test_a_deferral_naming_another_try_is_refused(forged: dict) -> None:
    """A try defers only itself: the worker records the deferral under its own dispatch's key and try token, and a
    deferral that names any other try (its token, key, task or number) is not a deferral this try can send."""
    assert _result({"state": "deferred", "deferral": DEFERRAL}).deferral is not None  # the genuine one passes
    with pytest.raises(ChildFailed, match="unknown fields"):
        _result({"state": "deferred", "deferral": {**DEFERRAL, **forged}})


@pytest.mark.parametrize("method", ["apply_ti_change", "finish_ti", "set_trigger", "resume_try", "defer"])
def test_writing_a_trigger_record_or_a_state_directly_is_refused(method: str) -> None:
    store = RecordingStore()
    reply = _call(store, method, _key(OTHER), "another-try", {"state": "deferred"})
    _refused(reply, store, "is not allowed from task code")

