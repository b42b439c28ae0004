"""Mapped task groups in the scheduler: the group's tasks expand to the group's length as soon as it is known,
instance ``i`` inside the group follows instance ``i`` of its upstream in the group (Airflow's
``_iter_upstream_conditions`` for a task in a mapped task group), and a task downstream of the group counts every
instance."""

from __future__ import annotations

from helpers import START, FakeRunStore, make_run, serialized

from airflow.sdk import DAG, task, task_group
from tests.mapped_group_dags import one_task_group
from updraft.model.states import DagRunState
from updraft.model.states import TaskInstanceState as S


def _dag():
    with DAG("d", schedule=None, start_date=START) as dag:
        @task
        def first(x):
            return x

        @task
        def second(y):
            return y

        @task(trigger_rule="all_done")
        def tidy(y):
            return y

        @task
        def after(values):
            return values

        @task_group
        def group(x):
            y = first(x)
            second(y) >> tidy(y)
            return y

        after(group.expand(x=[1, 2, 3]))
    return serialized(dag)


def test_the_group_s_tasks_are_serialized_with_its_input():
    dag = _dag()
    inner = dag.task_dict["group.second"]
    assert inner.is_mapped and inner.map_group_id == "group"
    assert inner.expand_input == {"kind": "dict-of-lists", "target": "group", "value": {"x": [1, 2, 3]}}
    assert not dag.task_dict["after"].is_mapped and dag.task_dict["after"].map_group_id is None


def test_every_task_of_the_group_expands_at_once_and_each_index_follows_its_own_upstream():
    dag = _dag()
    store = FakeRunStore(make_run())
    store.evaluate(dag)
    states = store.states()
    assert [states[f"group.first[{i}]"] for i in range(3)] == ["scheduled"] * 3
    assert [states.get(f"group.second[{i}]") for i in range(3)] == [None] * 3  # expanded, waiting on first[i]

    store.set("group.first", S.SUCCESS, 0)
    store.set("group.first", S.FAILED, 1)
    evaluation = store.evaluate(dag)
    states = store.states()
    assert [states.get(f"group.second[{i}]") for i in range(3)] == ["scheduled", "upstream_failed", None]
    # all_done: index 1 runs (its second is done), index 0 waits for second[0], index 2 for second[2].
    assert [states.get(f"group.tidy[{i}]") for i in range(3)] == [None, "scheduled", None]
    # after (all_success over every index of first) does not wait for first[2]: one failure decides.
    assert states["after"] == "upstream_failed" and evaluation.run_state is None


def test_downstream_of_the_group_waits_for_every_index():
    dag = _dag()
    store = FakeRunStore(make_run())
    for name in ("first", "second", "tidy"):
        for i in range(3):
            store.add(f"group.{name}", S.SUCCESS, i, try_number=1)
    store.set("group.first", S.RUNNING, 2)
    store.evaluate(dag)
    assert store.states().get("after") is None
    store.set("group.first", S.FAILED, 2)
    store.set("group.second", S.UPSTREAM_FAILED, 2)
    store.evaluate(dag)
    assert store.states()["after"] == "upstream_failed"
    assert store.run.state == DagRunState.FAILED


def test_a_group_over_an_empty_list_is_skipped():
    store = FakeRunStore(make_run())
    store.evaluate(serialized(one_task_group("d", [], start_date=START)))
    assert store.states() == {"group.one": "skipped"}
