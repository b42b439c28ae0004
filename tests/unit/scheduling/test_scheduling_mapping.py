"""Dynamic task mapping: expansion once the values are known, empty expansions, mapped over mapped."""

from __future__ import annotations

from helpers import START, FakeRunStore, make_run, serialized

from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG, task
from updraft.model.states import DagRunState
from updraft.model.states import TaskInstanceState as S


@task
def gen():
    return [1, 2, 3]


@task
def pairs():
    return {"a": 1}


@task
def each(x, y=0):
    return x


@task
def total(values):
    return sum(values)


def test_a_literal_list_expands_into_one_scheduled_instance_per_item():
    with DAG("d", schedule=None, start_date=START) as dag:
        each.expand(x=[10, 20, 30])
    store = FakeRunStore(make_run())
    store.evaluate(serialized(dag))
    assert store.states() == {"each[0]": "scheduled", "each[1]": "scheduled", "each[2]": "scheduled"}


def test_expand_over_two_arguments_is_the_cross_product():
    with DAG("d", schedule=None, start_date=START) as dag:
        each.expand(x=[1, 2, 3], y={"a": 1, "b": 2})
    store = FakeRunStore(make_run())
    store.evaluate(serialized(dag))
    assert len(store.states()) == 6


def test_an_xcom_is_expanded_once_its_upstream_succeeded_with_its_recorded_length():
    with DAG("d", schedule=None, start_date=START) as dag:
        each.expand(x=gen())
    dag = serialized(dag)
    store = FakeRunStore(make_run())
    store.evaluate(dag)
    assert store.states() == {"gen": "scheduled"}  # the mapped task waits as one unexpanded instance
    store.set("gen", S.SUCCESS, xcom_length=4)
    store.evaluate(dag)
    assert store.states() == {"each[0]": "scheduled", "each[1]": "scheduled", "each[2]": "scheduled",
                              "each[3]": "scheduled", "gen": "success"}


def test_cross_product_of_an_xcom_and_a_literal():
    with DAG("d", schedule=None, start_date=START) as dag:
        each.expand(x=gen(), y=[1, 2])
    store = FakeRunStore(make_run())
    store.add("gen", S.SUCCESS, xcom_length=3)
    store.evaluate(serialized(dag))
    assert sum(1 for label in store.states() if label.startswith("each[")) == 6


def test_expand_kwargs_over_a_literal_list_and_an_xcom():
    with DAG("d", schedule=None, start_date=START) as dag:
        BashOperator.partial(task_id="lit").expand_kwargs([{"bash_command": "a"}, {"bash_command": "b"}])
        BashOperator.partial(task_id="fromxcom").expand_kwargs(pairs())
    store = FakeRunStore(make_run())
    store.add("pairs", S.SUCCESS, xcom_length=5)
    store.evaluate(serialized(dag))
    labels = store.states()
    assert sum(1 for k in labels if k.startswith("lit[")) == 2
    assert sum(1 for k in labels if k.startswith("fromxcom[")) == 5


def test_an_empty_expansion_skips_the_mapped_task_and_its_downstream():
    with DAG("d", schedule=None, start_date=START) as dag:
        total(each.expand(x=gen()))
    store = FakeRunStore(make_run())
    store.add("gen", S.SUCCESS, xcom_length=0)
    evaluation = store.evaluate(serialized(dag))
    assert store.states() == {"each": "skipped", "gen": "success", "total": "skipped"}
    assert "empty" in store.items[evaluation.changes[0].key].note
    assert evaluation.run_state == DagRunState.SUCCESS


def test_a_failed_or_skipped_upstream_marks_the_unexpanded_instance_without_expanding():
    with DAG("d", schedule=None, start_date=START) as dag:
        each.expand(x=gen())
    dag = serialized(dag)
    failed = FakeRunStore(make_run())
    failed.add("gen", S.FAILED)
    failed.evaluate(dag)
    assert failed.states() == {"each": "upstream_failed", "gen": "failed"}
    skipped = FakeRunStore(make_run())
    skipped.add("gen", S.SKIPPED)
    skipped.evaluate(dag)
    assert skipped.states() == {"each": "skipped", "gen": "skipped"}


def test_a_missing_length_fails_the_expansion_as_airflow_does():
    with DAG("d", schedule=None, start_date=START) as dag:
        each.override(trigger_rule="all_done").expand(x=gen())
    store = FakeRunStore(make_run())
    store.add("gen", S.FAILED)  # all_done lets it try to expand, but there is nothing to expand over
    store.evaluate(serialized(dag))
    assert store.states()["each"] == "upstream_failed"


def test_mapped_over_mapped_counts_the_upstream_instances_once_all_are_done():
    with DAG("d", schedule=None, start_date=START) as dag:
        first = each.override(task_id="first").expand(x=[1, 2, 3])
        each.override(task_id="second").expand(x=first)
    dag = serialized(dag)
    store = FakeRunStore(make_run())
    store.evaluate(dag)
    store.set("first", S.SUCCESS, 0)
    store.set("first", S.SUCCESS, 1)
    store.evaluate(dag)
    assert not any(k.startswith("second") for k in store.states())  # first[2] is still scheduled
    store.set("first", S.SUCCESS, 2)
    store.evaluate(dag)
    assert [k for k in store.states() if k.startswith("second")] == ["second[0]", "second[1]", "second[2]"]


def test_downstream_of_a_mapped_task_waits_for_every_instance_then_runs():
    with DAG("d", schedule=None, start_date=START) as dag:
        total(each.expand(x=[1, 2]))
    dag = serialized(dag)
    store = FakeRunStore(make_run())
    store.evaluate(dag)
    store.set("each", S.SUCCESS, 0)
    store.evaluate(dag)
    assert "total" not in store.states()
    store.set("each", S.SUCCESS, 1)
    store.evaluate(dag)
    assert store.states()["total"] == "scheduled"


def test_an_expansion_interrupted_half_way_is_completed():
    with DAG("d", schedule=None, start_date=START) as dag:
        total(each.expand(x=gen()))
    store = FakeRunStore(make_run())
    store.add("gen", S.SUCCESS, xcom_length=3)
    store.add("each", S.SUCCESS, 0)  # a crash after writing the first instance only
    store.evaluate(serialized(dag))
    assert store.states() == {"each[0]": "success", "each[1]": "scheduled", "each[2]": "scheduled",
                              "gen": "success"}


def test_zip_takes_the_shortest_and_concat_the_sum():
    with DAG("d", schedule=None, start_date=START) as dag:
        a, b = gen.override(task_id="a")(), gen.override(task_id="b")()
        each.override(task_id="zipped").expand(x=a.zip(b))
        each.override(task_id="concat").expand(x=a.concat(b))
        each.override(task_id="mapped").expand(x=a.map(str))
    store = FakeRunStore(make_run())
    store.add("a", S.SUCCESS, xcom_length=2)
    store.add("b", S.SUCCESS, xcom_length=5)
    store.evaluate(serialized(dag))
    counts = {}
    for label in store.states():
        counts[label.split("[")[0]] = counts.get(label.split("[")[0], 0) + 1
    assert counts == {"a": 1, "b": 1, "zipped": 2, "concat": 7, "mapped": 2}
