"""Dynamic task mapping declarations: ``partial().expand()`` and ``expand_kwargs``, classic and TaskFlow."""

from __future__ import annotations

import datetime as dt

import pytest

from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, TaskGroup, task


@task
def numbers() -> list[int]:
    return [1, 2, 3]


@task
def add(x: int, y: int = 0, ti=None) -> int:
    return x + y


class TestClassicOperators:
    def test_expand_builds_one_mapped_node(self):
        with DAG("m", default_args={"retries": 2}) as dag:
            mapped = BashOperator.partial(task_id="echo", pool="p", retry_delay=10).expand(
                bash_command=["echo 1", "echo 2"])
        assert dag.task_ids == ["echo"]
        assert mapped.is_mapped
        assert mapped.task_type == "BashOperator"
        assert mapped.expand_input.value == {"bash_command": ["echo 1", "echo 2"]}
        # the scheduler sees the same attributes an unmapped task would have
        assert (mapped.retries, mapped.pool, mapped.retry_delay) == (2, "p", dt.timedelta(seconds=10))
        assert mapped.template_fields == BashOperator.template_fields

    def test_expand_over_an_xcomarg_wires_the_producer(self):
        with DAG("m") as dag:
            source = EmptyOperator(task_id="source")
            mapped = BashOperator.partial(task_id="echo").expand(bash_command=source.output)
        assert mapped.upstream_task_ids == {"source"}
        assert dag.get_task("source").downstream_task_ids == {"echo"}

    def test_mapped_task_in_a_group(self):
        with DAG("m"), TaskGroup("g"):
            mapped = BashOperator.partial(task_id="echo").expand(bash_command=["a"])
        assert mapped.task_id == "g.echo"
        assert mapped.label == "echo"

    def test_unknown_argument(self):
        with DAG("m"), pytest.raises(TypeError, match=r"BashOperator.expand\(\) got an unexpected keyword argument "
                                                      r"'nope'"):
            BashOperator.partial(task_id="e").expand(nope=["a"])
        with DAG("m"), pytest.raises(TypeError, match=r"BashOperator.partial\(\) got an unexpected keyword"):
            BashOperator.partial(task_id="e", nope=1)

    @pytest.mark.parametrize("name", ["task_id", "retries", "trigger_rule", "pool_slots", "owner", "queue"])
    def test_unmappable_arguments(self, name):
        with DAG("m"), pytest.raises(TypeError, match=f"unmappable or already specified argument: {name}"):
            BashOperator.partial(task_id="e", bash_command="x").expand(**{name: [1, 2]})

    def test_argument_given_to_partial_and_expand(self):
        with DAG("m"), pytest.raises(TypeError, match="unmappable or already specified argument: bash_command"):
            BashOperator.partial(task_id="e", bash_command="x").expand(bash_command=["y"])

    @pytest.mark.parametrize("value", ["echo", 5, {"a", "b"}, None])
    def test_non_list_literal(self, value):
        with DAG("m"), pytest.raises(ValueError, match=r"BashOperator.expand\(\) got an unexpected type"):
            BashOperator.partial(task_id="e").expand(bash_command=value)

    def test_dicts_and_tuples_are_mappable(self):
        with DAG("m"):
            BashOperator.partial(task_id="a").expand(bash_command=("x", "y"))
            BashOperator.partial(task_id="b", bash_command="x").expand(env={"A": "1"})

    def test_xcomarg_with_a_custom_key_cannot_be_mapped(self):
        with DAG("m"):
            source = EmptyOperator(task_id="source")
            with pytest.raises(ValueError, match="cannot map over XCom with custom key 'k'"):
                BashOperator.partial(task_id="e").expand(bash_command=source.output["k"])
            with pytest.raises(ValueError, match="cannot map over XCom with custom key 'k'"):
                BashOperator.partial(task_id="f", bash_command="x").expand(env=[{"A": source.output["k"]}])

    def test_nothing_to_expand(self):
        with DAG("m"), pytest.raises(TypeError, match="no arguments to expand against"):
            BashOperator.partial(task_id="e").expand()

    def test_partial_needs_a_task_id_and_a_class(self):
        with DAG("m"):
            with pytest.raises(TypeError, match="task_id"):
                BashOperator.partial(bash_command="x")
            existing = EmptyOperator(task_id="x")
            with pytest.raises(TypeError, match="partial can only be called on Operator classes"):
                existing.partial(task_id="y")

    def test_partial_arguments_are_validated(self):
        with DAG("pm"), pytest.raises(ValueError, match=r"pool slots for e.*cannot be less than 1"):
            BashOperator.partial(task_id="e", pool_slots=0).expand(bash_command=["x"])

    def test_expand_kwargs_list_of_dicts(self):
        with DAG("m"):
            mapped = BashOperator.partial(task_id="e").expand_kwargs([
                {"bash_command": "a", "env": {"X": "1"}},
                {"bash_command": "b"},
            ])
        assert mapped.expand_input.kind == "list-of-dicts"
        assert mapped.expand_arg_names() == ["bash_command", "env"]

    def test_expand_kwargs_from_an_xcomarg(self):
        with DAG("m"):
            source = EmptyOperator(task_id="source")
            mapped = BashOperator.partial(task_id="e").expand_kwargs(source.output)
        assert mapped.upstream_task_ids == {"source"}

    def test_expand_kwargs_errors(self):
        with DAG("m"):
            source = EmptyOperator(task_id="source")
            with pytest.raises(TypeError, match=r"expected XComArg or list\[dict\], not str"):
                BashOperator.partial(task_id="a").expand_kwargs("x")
            with pytest.raises(TypeError, match=r"expected XComArg or list\[dict\]"):
                BashOperator.partial(task_id="b").expand_kwargs([1, 2])
            with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
                BashOperator.partial(task_id="c").expand_kwargs([{"nope": 1}])
            with pytest.raises(ValueError, match="custom key"):
                BashOperator.partial(task_id="d").expand_kwargs(source.output["k"])


class TestTaskFlow:
    def test_expand_over_an_xcomarg(self):
        with DAG("t") as dag:
            out = add.expand(x=numbers())
        mapped = out.operator
        assert mapped.is_mapped and mapped.expand_target == "op_kwargs"
        assert mapped.task_id == "add"
        assert dag.get_task("add").upstream_task_ids == {"numbers"}

    def test_mapped_task_keeps_the_decorator_as_its_operator_name(self):
        from updraft.serialization import serialize_dag

        with DAG("t") as dag:
            add.expand(x=[1])
            EmptyOperator.partial(task_id="e").expand(doc=["a"])
        assert dag.get_task("add").custom_operator_name == "@task"
        tasks = {t["task_id"]: t for t in serialize_dag(dag, relative_fileloc="f.py", file_hash="h")["dag"]["tasks"]}
        assert tasks["add"]["custom_operator_name"] == "@task"
        assert "custom_operator_name" not in tasks["e"]

    def test_partial_then_expand_and_unique_ids(self):
        with DAG("t") as dag:
            add.partial(y=1).expand(x=[1, 2])
            add.expand(x=[3])
            add(1)
        assert dag.task_ids == ["add", "add__1", "add__2"]
        assert dag.get_task("add").partial_kwargs["op_kwargs"] == {"y": 1}

    def test_map_zip_and_concat_inputs(self):
        with DAG("t") as dag:
            first, second = numbers(), numbers()
            add.expand(x=first.map(lambda v: v * 2))
            add.expand(x=first.zip(second))
            add.expand(x=first.zip(second, fillvalue=0))
            add.expand(x=first.concat(second).concat(numbers()))
        for tid in ("add", "add__1", "add__2"):
            assert dag.get_task(tid).upstream_task_ids <= {"numbers", "numbers__1"}
        assert dag.get_task("add__3").upstream_task_ids == {"numbers", "numbers__1", "numbers__2"}
        assert len(dag.get_task("add__3").expand_input.value["x"].args) == 3

    def test_expand_kwargs(self):
        with DAG("t"):
            out = add.expand_kwargs([{"x": 1}, {"x": 2, "y": 3}])
            from_xcom = add.expand_kwargs(numbers())
        assert out.operator.expand_input.kind == "list-of-dicts"
        assert from_xcom.operator.upstream_task_ids == {"numbers"}

    def test_errors(self):
        with DAG("t"):
            with pytest.raises(TypeError, match=r"add.expand\(\) got an unexpected keyword argument 'z'"):
                add.expand(z=[1])
            with pytest.raises(ValueError, match=r"expand\(\) got an unexpected type 'int' for keyword argument 'x'"):
                add.expand(x=1)
            with pytest.raises(ValueError, match=r"cannot call expand\(\) on task context variable 'ti'"):
                add.expand(ti=[1])
            with pytest.raises(TypeError, match="no arguments to expand against"):
                add.expand()
            with pytest.raises(TypeError, match="partial argument: x"):
                add.partial(x=1).expand(x=[2])
            with pytest.raises(TypeError, match="missing a required argument: 'x'"):
                add.expand(y=[1])
            with pytest.raises(ValueError, match="custom key"):
                add.expand(x=numbers()["k"])
            with pytest.raises(TypeError, match=r"expected XComArg or list\[dict\]"):
                add.expand_kwargs({"x": 1})

    def test_required_argument_from_default_args(self):
        with DAG("t", default_args={"x": 5}) as dag:
            add.expand(y=[1, 2])
            add()
        assert dag.get_task("add__1").op_kwargs == {"x": 5}

    def test_trigger_rule_always_cannot_map_over_task_output(self):
        with DAG("t"), pytest.raises(ValueError, match="not allowed with trigger rule 'always'"):
            add.override(trigger_rule="always").expand(x=numbers())

    def test_map_rejects_a_task_function(self):
        with DAG("t"), pytest.raises(ValueError, match="map\\(\\) argument must be a plain function"):
            numbers().map(add)

    def test_zip_and_concat_only_on_return_values(self):
        with DAG("t"):
            out = numbers()
            with pytest.raises(ValueError, match="non-return XCom"):
                out["k"].zip(out)
            with pytest.raises(ValueError, match="non-return XCom"):
                out["k"].concat(out)
            with pytest.raises(ValueError, match="non-return XCom"):
                out["k"].map(str)
