"""Declaring setup and teardown tasks as Airflow 3.3's SDK does: the decorators, ``as_setup``/``as_teardown``, the
``with setup >> teardown:`` scope and its nesting, the checks Airflow makes, and a task group's leaves."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, TaskGroup, setup, task, task_group, teardown

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def _edges(dag):
    return {t.task_id: sorted(t.upstream_task_ids) for t in dag.tasks}


def test_the_decorators_mark_tasks_and_fix_the_teardown_rule():
    with DAG("d", schedule=None, start_date=START) as dag:
        @setup
        def create():
            return "id"

        @teardown(on_failure_fail_dagrun=True)
        def delete(cluster):
            return None

        @teardown
        def tidy():
            return None

        made = create()
        made >> delete(made)
        tidy()
    tasks = dag.task_dict
    assert (tasks["create"].is_setup, tasks["create"].is_teardown) == (True, False)
    assert (tasks["delete"].is_teardown, tasks["delete"].on_failure_fail_dagrun) == (True, True)
    assert tasks["delete"].trigger_rule == "all_done_setup_success" and tasks["create"].trigger_rule == "all_success"
    assert not tasks["tidy"].on_failure_fail_dagrun
    assert made.is_setup and made.as_setup() is made


def test_setup_and_teardown_accept_a_task_decorator_and_refuse_a_task_group():
    from airflow.sdk.exceptions import AirflowException

    with DAG("d", schedule=None, start_date=START) as dag:
        made = setup(task(lambda: 1, task_id="made"))()
    assert dag.task_dict["made"].is_setup and made.operator.is_setup

    @task_group
    def group():
        return None

    with pytest.raises(AirflowException, match="Task groups cannot be marked as setup or teardown"):
        setup(group)


def test_as_teardown_marks_its_setups_and_wires_them():
    with DAG("d", schedule=None, start_date=START) as dag:
        a, b = EmptyOperator(task_id="a"), EmptyOperator(task_id="b")
        t = EmptyOperator(task_id="t").as_teardown(setups=[a, b], on_failure_fail_dagrun=True)
    assert a.is_setup and b.is_setup and t.is_teardown and t.on_failure_fail_dagrun
    assert _edges(dag)["t"] == ["a", "b"] and t.trigger_rule == "all_done_setup_success"


def test_airflows_refusals():
    with DAG("d", schedule=None, start_date=START):
        work = EmptyOperator(task_id="work")
        with pytest.raises(ValueError, match="because it is not a teardown task"):
            work.on_failure_fail_dagrun = True
        t = EmptyOperator(task_id="t").as_teardown()
        with pytest.raises(ValueError, match="as setup; task is already a teardown"):
            t.as_setup()
        s = EmptyOperator(task_id="s").as_setup()
        with pytest.raises(ValueError, match="as teardown; task is already a setup"):
            s.as_teardown()
        with pytest.raises(RuntimeError, match="Only setup/teardown tasks can be used as context managers"):
            work.__enter__()

        @teardown
        def tidy():
            return None

        with pytest.raises(ValueError, match="Trigger rule not configurable for teardown tasks"):
            tidy.override(trigger_rule="all_success")()


def test_a_setup_followed_by_another_rule_is_refused_when_the_dag_is_validated():
    with DAG("d", schedule=None, start_date=START) as dag:
        EmptyOperator(task_id="s").as_setup() >> EmptyOperator(task_id="w", trigger_rule="all_done")
    with pytest.raises(ValueError, match="Setup tasks must be followed with trigger rule ALL_SUCCESS"):
        dag.validate()


def test_the_with_block_puts_its_work_between_the_setup_and_the_teardown():
    with DAG("d", schedule=None, start_date=START) as dag:
        s = EmptyOperator(task_id="s").as_setup()
        t = EmptyOperator(task_id="t").as_teardown(setups=s)
        with s >> t:
            first = EmptyOperator(task_id="first")
            first >> EmptyOperator(task_id="second")
            EmptyOperator(task_id="alone")
    assert _edges(dag) == {"s": [], "t": ["alone", "s", "second"], "first": ["s"], "second": ["first"],
                           "alone": ["s"]}


def test_nested_blocks_chain_the_setups_and_the_teardowns():
    with DAG("d", schedule=None, start_date=START) as dag:
        s1 = EmptyOperator(task_id="s1").as_setup()
        t1 = EmptyOperator(task_id="t1").as_teardown(setups=s1)
        s2 = EmptyOperator(task_id="s2").as_setup()
        t2 = EmptyOperator(task_id="t2").as_teardown(setups=s2)
        with s1 >> t1:
            EmptyOperator(task_id="outer")
            with s2 >> t2:
                EmptyOperator(task_id="inner")
    edges = _edges(dag)
    assert edges["s2"] == ["s1"] and edges["t1"] == ["outer", "s1", "t2"]
    assert edges["inner"] == ["s2"] and edges["t2"] == ["inner", "s2"]


def test_a_taskflow_teardown_as_the_block_and_add_task():
    with DAG("d", schedule=None, start_date=START) as dag:
        @setup
        def create():
            return "id"

        @teardown
        def delete(cluster):
            return None

        @task
        def work():
            return None

        before = work.override(task_id="before")()
        with delete(create()) as scope:
            work()
            scope.add_task(before)
    edges = _edges(dag)
    assert edges["work"] == ["create"] and edges["before"] == ["create"]
    assert edges["delete"] == ["before", "create", "work"]


def test_a_group_s_leaves_skip_its_teardown():
    with DAG("d", schedule=None, start_date=START) as dag:
        with TaskGroup("g") as g:
            s = EmptyOperator(task_id="s").as_setup()
            s >> EmptyOperator(task_id="w") >> EmptyOperator(task_id="t").as_teardown(setups=s)
        g >> EmptyOperator(task_id="after")
    assert _edges(dag)["after"] == ["g.w"]


def test_a_mapped_teardown():
    with DAG("d", schedule=None, start_date=START) as dag:
        @setup
        def create():
            return [1, 2]

        @teardown
        def delete(x):
            return None

        made = create()
        made >> delete.expand(x=made)
    mapped = dag.task_dict["delete"]
    assert mapped.is_mapped and mapped.is_teardown and mapped.trigger_rule == "all_done_setup_success"


def test_the_airflow_import_paths():
    from airflow.decorators import setup as setup_2
    from airflow.decorators import teardown as teardown_2
    from airflow.providers.common.compat.sdk import setup as setup_compat
    from airflow.sdk.definitions.decorators.setup_teardown import context_wrapper, setup_task, teardown_task

    assert setup_2 is setup is setup_compat is setup_task and teardown_2 is teardown is teardown_task
    with DAG("d", schedule=None, start_date=START) as dag:
        s1, s2 = EmptyOperator(task_id="s1").as_setup(), EmptyOperator(task_id="s2").as_setup()
        with context_wrapper([s1, s2]):
            EmptyOperator(task_id="w")
    assert _edges(dag)["w"] == ["s1", "s2"]
