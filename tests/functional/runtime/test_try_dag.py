"""A try's child gets its DAG version's facts from the worker, not the whole serialized DAG (``runtime.try_dag``);
the whole version crosses only when user code needs it (a branch deciding its skips)."""

from __future__ import annotations

from collections import Counter

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv
from updraft.runtime import supervisor


@pytest.fixture
def env(tmp_path):
    with mock_aws():
        yield RuntimeEnv(tmp_path)


@pytest.fixture
def served(monkeypatch):
    """The store calls the worker served its tries' children, by method."""
    counted: Counter[str] = Counter()
    serve = supervisor.serve_call

    def counting(store, scope, request):
        counted[request.get("call")] += 1
        return serve(store, scope, request)

    monkeypatch.setattr(supervisor, "serve_call", counting)
    return counted


def test_children_read_facts_and_the_whole_version_only_for_a_branch(env, served):
    env.add("facts", """
    @dag(schedule=None, start_date=START)
    def facts():
        @task
        def numbers():
            return [1, 2, 3]

        @task
        def double(x):
            return x * 2

        @task
        def not_a_list():
            return 7

        @task.branch
        def pick():
            return "kept"

        doubled = double.expand(x=numbers())
        pick() >> [EmptyOperator(task_id="kept"), EmptyOperator(task_id="dropped")]
        not_a_list() >> doubled

    facts()
    """)
    run = env.run("facts")
    states = env.states("facts", run.run_id)
    assert states["numbers"] == states["not_a_list"] == "success", states
    assert [states[f"double[{i}]"] for i in range(3)] == ["success"] * 3
    assert (states["kept"], states["dropped"]) == ("success", "skipped")
    assert [v for (_, k), v in sorted(env.store.list_xcoms("facts", run.run_id, "double").items())] == [2, 4, 6]
    # Six tries in children (numbers, three doubles, not_a_list, pick): each asked for its facts once; only the
    # branch read the whole version, to decide its skips.
    assert served["try_dag"] == 6, served
    assert served["get_serialized_dag"] == 1, served


def test_a_mapped_task_s_upstream_must_return_a_list_in_a_child(env, served):
    env.add("maps", """
    @dag(schedule=None, start_date=START)
    def maps():
        @task
        def numbers():
            return 3

        @task
        def double(x):
            return x * 2

        double.expand(x=numbers())

    maps()
    """)
    run = env.run("maps")
    assert env.states("maps", run.run_id)["numbers"] == "failed"
    assert "UnmappableXComTypePushed: unmappable return type 'int'" in env.log("maps", run.run_id, "numbers")
    assert served["get_serialized_dag"] == 0, served
