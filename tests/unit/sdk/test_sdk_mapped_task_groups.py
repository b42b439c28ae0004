"""``@task_group(...).expand`` / ``.partial`` / ``.expand_kwargs`` as Airflow 3.3's ``_TaskGroupFactory`` builds them,
the limits on nested mapping (refused at parse time), and a ``MappedArgument`` resolved for one map index."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from airflow.sdk import DAG, task, task_group
from updraft.runtime.mapping import resolve_mapped_argument
from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.sdk.taskgroup import MappedTaskGroup, closest_mapped_group
from updraft.sdk.xcom_arg import MappedArgument

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


@task
def numbers():
    return [1, 2]


@task
def use(x, y=0):
    return x + y


def test_expand_builds_a_mapped_group_whose_function_gets_mapped_arguments():
    seen = {}
    with DAG("d", schedule=None, start_date=START) as dag:
        @task_group
        def group(x, y):
            seen.update(x=x, y=y)
            return use(x, y)

        made = numbers()
        result = group.partial(y=5).expand(x=made)
    inner = dag.task_dict["group.use"]
    assert isinstance(inner.task_group, MappedTaskGroup) and closest_mapped_group(inner) is inner.task_group
    assert isinstance(seen["x"], MappedArgument) and seen["x"].key == "x" and seen["y"] == 5
    assert inner.upstream_task_ids == {"numbers"}  # the XCom the group maps over
    assert result.operator is inner
    assert repr(seen["x"]) == "MappedArgument(key='x')"


def test_expand_kwargs_maps_every_parameter_partial_did_not_give():
    seen = {}
    with DAG("d", schedule=None, start_date=START):
        @task_group
        def group(a, b, c=1):
            seen.update(a=a, b=b, c=c)
            use(a, b)

        group.partial(c=3).expand_kwargs([{"a": 1, "b": 2}])
    assert isinstance(seen["a"], MappedArgument) and isinstance(seen["b"], MappedArgument) and seen["c"] == 3


def test_a_mapped_argument_resolves_to_its_index_s_value():
    arguments = {}
    with DAG("d", schedule=None, start_date=START):
        @task_group
        def capture(x, y):
            arguments.update(x=x, y=y)

        capture.expand(x=[1, 2], y=["a", "b", "c"])
    context = {"ti": SimpleNamespace(map_index=4)}  # the last argument varies fastest: (2, "b")
    assert (resolve_mapped_argument(arguments["x"], context), resolve_mapped_argument(arguments["y"], context)) == (
        2, "b")


@pytest.mark.parametrize(("build", "error", "match"), [
    (lambda g: g.expand(), TypeError, "no arguments to expand against"),
    (lambda g: g.expand(z=[1]), TypeError, "expand\\(\\) got an unexpected keyword argument 'z'"),
    (lambda g: g.expand(x=1), ValueError, "expand\\(\\) got an unexpected type 'int' for keyword argument 'x'"),
    (lambda g: g.partial(x=1).expand(x=[1]), TypeError, "mapping already partial argument: x"),
    (lambda g: g.partial(x=1).partial(x=2), TypeError, "duplicate partial argument: x"),
    (lambda g: g.expand_kwargs(1), TypeError, "expected XComArg or list\\[dict\\], not int"),
    (lambda g: g.expand(x=numbers()["other"]), ValueError, "cannot map over XCom with custom key 'other'"),
])
def test_airflow_s_checks(build, error, match):
    with DAG("d", schedule=None, start_date=START):
        @task_group
        def group(x):
            use(x)

        with pytest.raises(error, match=match):
            build(group)


def test_expand_kwargs_refuses_a_function_with_star_arguments():
    with DAG("d", schedule=None, start_date=START):
        @task_group
        def group(**kwargs):
            use(1)

        with pytest.raises(TypeError, match="with \\* or \\*\\* is not supported"):
            group.expand_kwargs([{"x": 1}])


def test_nested_mapping_is_refused_at_parse_time():
    with DAG("d", schedule=None, start_date=START):
        @task_group
        def inner(y):
            use(y)

        @task_group
        def outer(x):
            inner.expand(y=[1, 2])

        outer.expand(x=[1, 2])  # Airflow accepts it, and so does Updraft (tests/functional/runtime)

        @task_group
        def with_mapped_task(x):
            use.expand(x=[1, 2])

        with pytest.raises(UnsupportedFeatureError, match="mapped tasks inside a mapped task group"):
            with_mapped_task.expand(x=[1, 2])

        @task_group
        def with_always(x):
            use.override(trigger_rule="always")(x)

        with pytest.raises(ValueError, match="not allowed with trigger rule 'always'"):
            with_always.expand(x=[1, 2])


def test_nested_mapping_refusals_say_what_airflow_does():
    with DAG("d", schedule=None, start_date=START):
        @task_group
        def inner(y):
            use(y)

        @task_group
        def over_outer_argument(x):
            inner.expand(y=x)

        # Airflow itself refuses a group expanded over its enclosing group's argument, with this ValueError
        with pytest.raises(ValueError, match=r"^Nested Mapped TaskGroups are not yet supported$"):
            over_outer_argument.expand(x=[1, 2])

        @task_group
        def task_over_group_argument(x):
            use.expand(x=x)

        # a task mapped over the group's argument meets Airflow's refusal of a mapped task in a mapped group
        with pytest.raises(UnsupportedFeatureError, match="mapped tasks inside a mapped task group"):
            task_over_group_argument.expand(x=[1, 2])

        @task_group
        def over_a_literal(x):
            inner.expand(y=[1, 2])

        over_a_literal.expand(x=[1, 2])  # Airflow accepts this one, as Updraft does


def test_nested_groups_depending_across_levels_are_refused_when_the_dag_is_validated():
    with DAG("d", schedule=None, start_date=START) as dag:
        @task_group
        def outer(x):
            @task_group
            def inner(y):
                use(y)

            use.override(task_id="first")(x) >> inner.expand(y=[1, 2])

        outer.expand(x=[1, 2])
    with pytest.raises(UnsupportedFeatureError, match=r"dependency between 'outer\.inner\.use' \(in nested mapped task "
                                                      r"group 'outer\.inner'\) and 'outer\.first'.*outer_count"):
        dag.validate()


def test_a_mapped_task_inside_a_mapped_group_is_refused_as_airflow_3_3_refuses_it():
    """Airflow 3.3.2 raises NotImplementedError("operator expansion in an expanded task group is not yet
    supported") when the mapped task is made (checked with real Airflow's `dags test`); so does Updraft, also inside
    a plain group nested in the mapped one, and with expand_kwargs and classic operators."""
    from airflow.providers.standard.operators.python import PythonOperator

    with DAG("d", schedule=None, start_date=START):
        @task_group
        def deep(x):
            @task_group
            def plain():
                use.expand_kwargs([{"x": 1}])

            plain()

        @task_group
        def classic(x):
            PythonOperator.partial(task_id="p", python_callable=print).expand(op_args=[[1]])

        for group in (deep, classic):
            with pytest.raises(NotImplementedError,
                               match="operator expansion in an expanded task group is not yet supported"):
                group.expand(x=[1, 2])


def test_a_mapped_group_s_dag_round_trips_through_its_document():
    from updraft.serialization import canonical_json, deserialize_dag, serialize_dag

    with DAG("d", schedule=None, start_date=START) as dag:
        @task_group
        def group(x):
            return use(x)

        group.expand_kwargs(numbers())
    doc = serialize_dag(dag, relative_fileloc="d.py", file_hash="h")
    assert canonical_json(deserialize_dag(doc).to_dict()) == canonical_json(doc)
    inner = deserialize_dag(doc).task_dict["group.use"]
    assert inner.expand_input["kind"] == "list-of-dicts" and inner.template_values["op_args"][0].text == \
        "MappedArgument(key='x')"
