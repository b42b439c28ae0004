"""Races the store must settle with one winner: eight threads on serialized moto (aws-offline.md 2a)."""

from __future__ import annotations

import pendulum
from store_helpers import dag_doc, parsed_file, race

from updraft.model.records import DagRun, TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.scheduling.commands.dag_registration import register_parsed_file, set_paused
from updraft.timetables.base import DagRunInfo, DataInterval

T0 = pendulum.datetime(2024, 1, 1, tz="UTC")
NOW = pendulum.datetime(2024, 1, 3, tz="UTC")
S = TaskInstanceState


def test_one_run_per_run_id(store, serialized_moto):
    results = race(8, lambda i: store.create_run(DagRun("d", "scheduled__x", "scheduled", f"hash-{i}",
                                                        logical_date=T0)))
    assert results.count(True) == 1
    winner = results.index(True)
    assert store.get_run("d", "scheduled__x").dag_hash == f"hash-{winner}"


def test_one_claim_per_try(store, serialized_moto):
    key = TIKey("d", "r", "t")
    store.transition_ti(key, expected=[None], state=S.SCHEDULED)
    results = race(8, lambda i: store.transition_ti(key, expected=[S.SCHEDULED], state=S.QUEUED,
                                                    fields={"try_id": f"try-{i}", "try_number": 1}))
    assert results.count(True) == 1
    assert store.get_ti(key).try_id == f"try-{results.index(True)}"


def test_one_creator_of_a_task_instance(store, serialized_moto):
    key = TIKey("d", "r", "t")
    results = race(8, lambda i: store.transition_ti(key, expected=[None], state=S.SKIPPED if i % 2 else S.SCHEDULED))
    assert results.count(True) == 1


def test_one_scheduler_advances_the_next_run(store, serialized_moto):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=True,
                                                       is_paused_upon_creation=False)), now=NOW)
    results = race(8, lambda i: store.advance_next_dagrun(
        "d", expected_logical_date=T0, next_info=DagRunInfo.exact(T0.add(days=1)),
        last_automated=DataInterval.exact(T0)))
    assert results.count(True) == 1


def test_one_run_finisher(store, serialized_moto):
    store.create_run(DagRun("d", "r", "manual", "h", state=DagRunState.RUNNING, logical_date=T0))
    results = race(8, lambda i: store.set_run_state("d", "r", expected=[DagRunState.RUNNING],
                                                    state=DagRunState.SUCCESS if i % 2 else DagRunState.FAILED,
                                                    now=NOW))
    assert results.count(True) == 1
    assert store.active_runs() == []


def test_two_files_racing_for_one_new_dag_id_leave_one_owner_and_one_import_error(store, serialized_moto):
    paths = [f"f{i}.py" for i in range(4)]
    outcomes = race(4, lambda i: register_parsed_file(store, parsed_file(paths[i], dag_doc("x", path=paths[i])),
                                                        now=NOW))
    assert sum(o.stored == ["x"] for o in outcomes) == 1
    assert sum(o.duplicates == ["x"] for o in outcomes) == 3
    owner = store.get_dag_meta("x").relative_fileloc
    assert outcomes[paths.index(owner)].stored == ["x"]
    assert sorted(e["filename"] for e in store.list_import_errors()) == sorted(set(paths) - {owner})


def test_pause_and_reparse_racing_keep_both_effects(store, serialized_moto):
    register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=True)), now=NOW)

    def act(i: int):
        if i == 0:
            return set_paused(store, "d", False)
        return register_parsed_file(store, parsed_file("a.py", dag_doc("d", schedule="@daily", catchup=True,
                                                                  tasks=("t", f"u{i}"))), now=NOW)

    race(4, act)
    meta = store.get_dag_meta("d")
    assert meta.is_paused is False and meta.is_active is True
    assert [m.dag_id for m in store.due_dags(NOW)] == ["d"]  # the due entry agrees with the row
