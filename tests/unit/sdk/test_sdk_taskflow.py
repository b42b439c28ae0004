"""TaskFlow (``@task`` and its variants), ``@dag`` and auto-registration."""

from __future__ import annotations

import datetime as dt
from typing import TypedDict

import pytest

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Param, TaskGroup, dag, task
from updraft.sdk._internal import dag_registry
from updraft.sdk.exceptions import UnsupportedFeatureError


class Row(TypedDict):
    a: int


class TestTaskDecorator:
    def test_call_creates_a_task_and_returns_its_xcomarg(self):
        with DAG("t") as the_dag:
            @task
            def hello(name):
                return f"hi {name}"

            out = hello("you")
        assert out.operator is the_dag.get_task("hello")
        assert out.key == "return_value"
        assert out.operator.op_args == ["you"]
        assert out.operator.python_callable_name.endswith("hello")
        assert out.operator.custom_operator_name == "@task"

    def test_unique_ids(self):
        with DAG("t") as the_dag:
            @task
            def f():
                return 1

            ids = [f().operator.task_id for _ in range(3)]
            with TaskGroup("g"):
                in_group = [f().operator.task_id for _ in range(2)]
        assert ids == ["f", "f__1", "f__2"]
        assert in_group == ["g.f", "g.f__1"]
        assert the_dag.task_ids == ["f", "f__1", "f__2", "g.f", "g.f__1"]

    def test_override(self):
        with DAG("t") as the_dag:
            @task(retries=1, pool="base")
            def f():
                return 1

            f()
            other = f.override(task_id="other", retries=4)()
            again = f.override(pool="special")()
        assert (other.operator.task_id, other.operator.retries, other.operator.pool) == ("other", 4, "base")
        assert (again.operator.task_id, again.operator.pool) == ("f__1", "special")
        assert the_dag.get_task("f").retries == 1

    @pytest.mark.parametrize(("annotation", "expected"), [
        (dict[str, int], True), (dict, True), (Row, True), (list[int], False), (int, False), (None, False),
    ])
    def test_multiple_outputs_inference(self, annotation, expected):
        def fn():
            return {}

        if annotation is not None:
            fn.__annotations__ = {"return": annotation}
        with DAG("t"):
            out = task(fn)()
        assert out.operator.multiple_outputs is expected

    def test_multiple_outputs_from_a_string_annotation_and_explicit_override(self):
        def fn() -> dict[str, int]:
            return {}

        def unresolvable() -> Missing:  # noqa: F821
            return {}

        with DAG("t"):
            assert task(fn)().operator.multiple_outputs is True
            assert task(multiple_outputs=False)(fn)().operator.multiple_outputs is False
            assert task(unresolvable)().operator.multiple_outputs is False

    def test_signature_is_checked_at_call_time(self):
        @task
        def needs(x, y=1):
            return x

        with DAG("t"):
            with pytest.raises(TypeError, match="missing a required argument: 'x'"):
                needs()
            with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
                needs(1, z=2)
            with pytest.raises(TypeError, match="too many positional arguments"):
                needs(1, 2, 3)

    def test_context_key_parameters_are_optional(self):
        @task
        def uses_context(x, ti=None, params=None, **context):
            return x

        with DAG("t"):
            out = uses_context(1)
        assert out.operator.op_args == [1]

    def test_context_key_parameter_defaults_other_than_none(self):
        @task
        def bad(ti=1):
            return ti

        with DAG("t"), pytest.raises(ValueError, match="Context key parameter ti can't have a default other than None"):
            bad()

    def test_methods_are_refused(self):
        with pytest.raises(TypeError, match="does not support methods"):
            class Holder:
                @task
                def method(self):
                    return 1

    def test_docstring_becomes_doc_md_unless_a_doc_is_given(self):
        @task
        def documented():
            """Loads the data."""

        with DAG("t"):
            plain = documented()
            explicit = documented.override(doc="given")()
        assert plain.operator.doc_md == "Loads the data."
        assert explicit.operator.doc_md is None and explicit.operator.doc == "given"

    def test_default_args_feed_the_function_arguments(self):
        @task
        def f(region, retries_seen=None):
            return region

        with DAG("t", default_args={"region": "eu-west-1", "retries": 2}):
            out = f()
            explicit = f(region="us-east-1")
        assert out.operator.op_kwargs == {"region": "eu-west-1"}
        assert out.operator.retries == 2
        assert explicit.operator.op_kwargs == {"region": "us-east-1"}

    def test_xcomarg_arguments_wire_upstream(self):
        with DAG("t") as the_dag:
            @task
            def one():
                return 1

            @task
            def two(a, b):
                return a + b

            src = EmptyOperator(task_id="src")
            two(one(), b={"nested": [src.output]})
        assert the_dag.get_task("two").upstream_task_ids == {"one", "src"}


class TestVariants:
    def test_bash(self):
        with DAG("t"):
            @task.bash(env={"A": "1"})
            def run(n):
                return f"echo {n}"

            op = run(3).operator
        assert op.task_type == "BashDecoratedOperator"
        assert op.custom_operator_name == "@task.bash"
        assert op.op_args == [3] and op.env == {"A": "1"}
        assert set(op.template_fields) >= {"bash_command", "env", "op_args", "op_kwargs"}

    def test_branch(self):
        with DAG("t"):
            @task.branch
            def choose():
                return "a"

            op = choose().operator
        assert op._can_skip_downstream and op.custom_operator_name == "@task.branch"

    def test_short_circuit(self):
        with DAG("t"):
            @task.short_circuit
            def check():
                return True

            @task.short_circuit(ignore_downstream_trigger_rules=False)
            def soft():
                return True

            default, explicit = check().operator, soft().operator
        assert default.ignore_downstream_trigger_rules is True
        assert explicit.ignore_downstream_trigger_rules is False
        assert default._can_skip_downstream

    def test_sensor(self):
        with DAG("t"):
            @task.sensor(poke_interval=30, timeout=600, mode="reschedule")
            def ready():
                return True

            op = ready().operator
        assert op._is_sensor
        assert (op.poke_interval, op.timeout, op.mode) == (30, 600, "reschedule")
        assert op.custom_operator_name == "@task.sensor"

    @pytest.mark.parametrize("name", ["docker", "kubernetes", "kubernetes_cmd", "pyspark"])
    def test_unsupported_variants_name_themselves(self, name):
        with pytest.raises(UnsupportedFeatureError, match=f"@task.{name}"):
            getattr(task, name)

    def test_unknown_variant(self):
        with pytest.raises(AttributeError):
            task.nonexistent  # noqa: B018


class TestDagDecorator:
    def test_dag_id_params_and_doc(self):
        @dag(schedule=None, tags=["deco"])
        def my_pipeline(limit: int = 5, region: str = "eu"):
            """Pipeline docs."""

            @task
            def use(value):
                return value

            use(limit)

        the_dag = my_pipeline()
        assert the_dag.dag_id == "my_pipeline"
        assert dict(the_dag.params) == {"limit": 5, "region": "eu"}
        assert the_dag.doc_md == "Pipeline docs."
        assert the_dag.tags == {"deco"}
        assert the_dag.task_ids == ["use"]
        assert the_dag.fileloc == __file__

    def test_call_arguments_override_defaults(self):
        @dag(params={"limit": Param(1, type="integer")})
        def pipeline(limit=1):
            pass

        assert pipeline(limit=7).params["limit"] == 7
        with pytest.raises(Exception, match="is not of type 'integer'"):
            pipeline(limit="many")

    def test_explicit_dag_id_and_doc_md(self):
        @dag("explicit_id", doc_md="given")
        def fn():
            """Ignored."""

        @dag(dag_id="kw_id")
        def other():
            pass

        assert (fn().dag_id, fn().doc_md) == ("explicit_id", "given")
        assert other().dag_id == "kw_id"

    def test_missing_function_argument(self):
        @dag
        def needs(x):
            pass

        with pytest.raises(TypeError, match="missing a required argument: 'x'"):
            needs()

    def test_scheduled_dag_with_a_required_param_from_an_argument(self):
        @dag(schedule="@daily", start_date=dt.datetime(2024, 1, 1), params={"p": Param(type="string")})
        def scheduled():
            pass

        with pytest.raises(ValueError, match="not allowed to define a Schedule"):
            scheduled()


class TestAutoRegistration:
    def setup_method(self):
        dag_registry.reset()

    def teardown_method(self):
        dag_registry.reset()

    def test_with_blocks_and_dag_calls_register(self):
        with DAG("with_block"):
            pass
        DAG("constructed_only")
        with DAG("opted_out", auto_register=False):
            pass

        @dag
        def decorated():
            pass

        @dag(auto_register=False)
        def decorated_opted_out():
            pass

        decorated()
        decorated_opted_out()
        assert [d.dag_id for d in dag_registry.registered_dags()] == ["with_block", "decorated"]

    def test_a_failing_with_block_does_not_register(self):
        with pytest.raises(RuntimeError), DAG("broken"):
            raise RuntimeError("boom")
        assert dag_registry.registered_dags() == []

    def test_same_dag_entered_twice_registers_once(self):
        the_dag = DAG("twice")
        with the_dag:
            pass
        with the_dag:
            pass
        assert dag_registry.registered_dags() == [the_dag]
