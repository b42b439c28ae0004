"""A worker finds the serialized DAG of its try through the store, whose LRU is the process's one cache of
versions: no second cache in the runtime that a store's bound would not cover."""

from __future__ import annotations

import sys

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv


@pytest.fixture
def env(tmp_path):
    with mock_aws():
        yield RuntimeEnv(tmp_path)


def test_every_try_asks_the_store_for_its_version(env):
    env.add("versions", """
    with DAG("versions", schedule=None, start_date=START):
        PythonOperator(task_id="a", python_callable=print) >> PythonOperator(task_id="b", python_callable=print)
    """)
    asked_by_runtime: list[str] = []
    original = env.store.get_serialized_dag

    def spy(dag_id, dag_hash):
        caller = sys._getframe(1).f_globals["__name__"]
        if caller.startswith("updraft.runtime."):
            asked_by_runtime.append(dag_id)
        return original(dag_id, dag_hash)

    env.store.get_serialized_dag = spy
    run = env.run("versions")
    assert env.states("versions", run.run_id) == {"a": "success", "b": "success"}
    # One ask per try: the store's cache answers the second (no GetItem), no runtime cache in front of it.
    assert asked_by_runtime == ["versions", "versions"]
