"""Operator arguments: default_args precedence and validation, as Airflow 3's BaseOperator does them."""

from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar

import pytest

from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, BaseOperator, Param, TaskGroup, TriggerRule
from updraft.sdk.exceptions import AirflowException

# Every rule Airflow 3 has (airflow.task.trigger_rule.TriggerRule).
AIRFLOW3_TRIGGER_RULES = [
    "all_success", "all_failed", "all_done", "all_done_min_one_success", "all_done_setup_success", "one_success",
    "one_failed", "one_done", "none_failed", "none_skipped", "always", "none_failed_min_one_success",
    "all_skipped",
]


class CustomOperator(BaseOperator):
    template_fields: ClassVar[tuple[str, ...]] = ("sql", "target")
    template_ext: ClassVar[tuple[str, ...]] = (".sql",)

    def __init__(self, *, sql: str, target: str = "t", level: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sql = sql
        self.target = target
        self.level = level


class TestDefaultArgs:
    def test_precedence_dag_group_task_default_args_explicit(self):
        dag_defaults = {"retries": 1, "owner": "dag", "pool": "p_dag", "queue": "q_dag", "sql": "dag.sql"}
        group_defaults = {"retries": 2, "owner": "grp", "target": "grp"}
        with DAG("d", default_args=dag_defaults), TaskGroup("g", default_args=group_defaults):
            t = CustomOperator(task_id="t", default_args={"owner": "own", "level": 3})
            e = CustomOperator(task_id="e", owner="explicit", retries=9, default_args={"owner": "own"})
        assert (t.retries, t.owner, t.pool, t.queue) == (2, "own", "p_dag", "q_dag")
        assert (t.sql, t.target, t.level) == ("dag.sql", "grp", 3)  # subclass arguments too
        assert (e.owner, e.retries) == ("explicit", 9)

    def test_default_args_do_not_leak_between_dags(self):
        with DAG("a", default_args={"retries": 5}):
            a = EmptyOperator(task_id="t")
        with DAG("b"):
            b = EmptyOperator(task_id="t")
        assert (a.retries, b.retries) == (5, 0)

    def test_params_merge_dag_task_and_default_args(self):
        with DAG("d", params={"a": 1, "b": 1, "z": Param(0, type="integer")},
                 default_args={"params": {"b": 2}}) as dag:
            t = EmptyOperator(task_id="t", params={"c": 3}, default_args={"params": {"d": 4}})
            plain = EmptyOperator(task_id="plain")
        assert dict(dag.params) == {"a": 1, "b": 2, "z": 0}
        assert dict(t.params) == {"a": 1, "b": 2, "z": 0, "c": 3, "d": 4}
        assert dict(plain.params) == {"a": 1, "b": 2, "z": 0}
        # a copy: changing the task's params leaves the DAG's alone
        t.params["a"] = 100
        assert dag.params["a"] == 1

    def test_missing_required_argument(self):
        with DAG("d"), pytest.raises(TypeError, match="missing keyword argument 'bash_command'"):
            BashOperator(task_id="b")

    def test_required_argument_from_default_args(self):
        with DAG("d", default_args={"bash_command": "echo hi"}):
            assert BashOperator(task_id="b").bash_command == "echo hi"

    def test_positional_arguments_are_refused(self):
        with DAG("d"), pytest.raises(TypeError, match="Use keyword arguments"):
            EmptyOperator("t")

    def test_default_args_must_be_a_mapping(self):
        with DAG("d"), pytest.raises(TypeError, match="default_args must be a mapping"):
            EmptyOperator(task_id="t", default_args=["retries"])


class TestUnknownAndRemovedArguments:
    def test_unknown_kwargs_use_airflows_error(self):
        with DAG("d"), pytest.raises(TypeError) as info:
            EmptyOperator(task_id="t", not_an_arg=1)
        assert str(info.value).startswith("Invalid arguments were passed to EmptyOperator (task_id: t). "
                                          "Invalid arguments were:\n**kwargs: {'not_an_arg': 1}")
        # Airflow 2 raised AirflowException here; code catching either still works
        assert isinstance(info.value, AirflowException)

    def test_task_concurrency_was_renamed(self):
        with DAG("d"), pytest.raises(TypeError, match="renamed to max_active_tis_per_dag"):
            EmptyOperator(task_id="t", task_concurrency=2)

    def test_sla_is_ignored_with_airflows_warning(self):
        with DAG("d"), pytest.warns(UserWarning, match="SLA feature is removed in Airflow 3.0"):
            EmptyOperator(task_id="t", sla=dt.timedelta(hours=1))


class TestTriggerRules:
    @pytest.mark.parametrize("rule", AIRFLOW3_TRIGGER_RULES)
    def test_every_airflow3_rule_is_accepted(self, rule):
        with DAG("d"):
            task = EmptyOperator(task_id="t", trigger_rule=rule)
        assert task.trigger_rule == rule
        assert isinstance(task.trigger_rule, TriggerRule)

    def test_enum_members_match_airflow(self):
        assert sorted(r.value for r in TriggerRule) == sorted(AIRFLOW3_TRIGGER_RULES)
        with DAG("d"):
            assert EmptyOperator(task_id="t", trigger_rule=TriggerRule.ONE_FAILED).trigger_rule == "one_failed"

    @pytest.mark.parametrize(("rule", "hint"), [
        ("dummy", "renamed to 'always'"),
        ("none_failed_or_skipped", "renamed to 'none_failed_min_one_success'"),
        ("ALL_SUCCESS", None),
        ("bogus", None),
    ])
    def test_invalid_and_removed_rules(self, rule, hint):
        with DAG("dg"), pytest.raises(ValueError) as info:
            EmptyOperator(task_id="t", trigger_rule=rule)
        message = str(info.value)
        assert message.startswith("The trigger_rule must be one of ['all_success', ")
        assert f"'dg.t'; received '{rule}'." in message
        if hint:
            assert hint in message

    def test_default_is_all_success(self):
        with DAG("d"):
            assert EmptyOperator(task_id="t").trigger_rule == TriggerRule.ALL_SUCCESS


class TestPoolsAndPriority:
    def test_pool_defaults(self):
        with DAG("d"):
            task = EmptyOperator(task_id="t")
        assert (task.pool, task.pool_slots, task.priority_weight, task.weight_rule) == ("default_pool", 1, 1,
                                                                                         "downstream")

    def test_pool_none_means_default_pool(self):
        with DAG("d"):
            assert EmptyOperator(task_id="t", pool=None).pool == "default_pool"

    @pytest.mark.parametrize("slots", [0, -1])
    def test_pool_slots_below_one(self, slots):
        with DAG("pd"), pytest.raises(ValueError, match="pool slots for t in dag pd cannot be less than 1"):
            EmptyOperator(task_id="t", pool_slots=slots)

    def test_pool_slots_must_be_an_int(self):
        with DAG("pd"), pytest.raises(TypeError):
            EmptyOperator(task_id="t", pool_slots=1.5)

    def test_pool_must_be_a_string(self):
        with DAG("pd"), pytest.raises(TypeError, match="'pool' for task 't' expects"):
            EmptyOperator(task_id="t", pool=5)

    def test_types_are_checked_after_tasks_of_the_same_shape_passed(self):
        """The checks skip only what passed before with values of the same plain types: a wrong value after
        many right ones is still refused, and a value whose ``__class__`` is its own (a proxy) is checked each
        time, as ``isinstance`` of it does not follow its type."""

        class Proxy:
            def __init__(self, wrapped: Any) -> None:
                self.wrapped = wrapped

            @property  # type: ignore[misc]
            def __class__(self) -> type:
                return type(self.wrapped)

        with DAG("d"):
            for index in range(3):
                EmptyOperator(task_id=f"fine{index}", queue="q", doc="d")
            with pytest.raises(TypeError, match="'queue' for task 'wrong' expects"):
                EmptyOperator(task_id="wrong", queue=5, doc="d")
            assert EmptyOperator(task_id="proxied", queue=Proxy("q")).queue.wrapped == "q"
            with pytest.raises(TypeError, match="'queue' for task 'proxied_int' expects"):
                EmptyOperator(task_id="proxied_int", queue=Proxy(5))

    @pytest.mark.parametrize("weight", [1.5, "3", None])
    def test_priority_weight_type(self, weight):
        with DAG("d"), pytest.raises(TypeError, match="'priority_weight' for task 't' expects"):
            EmptyOperator(task_id="t", priority_weight=weight)

    def test_priority_weight_is_clamped_to_32_bits(self):
        with DAG("d"):
            high = EmptyOperator(task_id="high", priority_weight=2**40)
            low = EmptyOperator(task_id="low", priority_weight=-(2**40))
            negative = EmptyOperator(task_id="neg", priority_weight=-5)
        assert (high.priority_weight, low.priority_weight) == (2**31 - 1, -(2**31))
        assert negative.priority_weight == -5

    @pytest.mark.parametrize("rule", ["downstream", "upstream", "absolute"])
    def test_weight_rules(self, rule):
        with DAG("d"):
            assert EmptyOperator(task_id="t", weight_rule=rule).weight_rule == rule

    def test_unknown_weight_rule(self):
        with DAG("d"), pytest.raises(ValueError, match="weight_rule"):
            EmptyOperator(task_id="t", weight_rule="sideways")


class TestRetriesAndTimeouts:
    @pytest.mark.parametrize(("given", "expected"), [(None, 0), (3, 3), ("4", 4), (2.0, 2), (0, 0)])
    def test_retries_parsing(self, given, expected):
        with DAG("d"):
            assert EmptyOperator(task_id="t", retries=given).retries == expected

    @pytest.mark.parametrize("given", ["three", [1], object()])
    def test_retries_not_a_number(self, given):
        with DAG("d"), pytest.raises(TypeError, match="'retries' type must be int"):
            EmptyOperator(task_id="t", retries=given)

    def test_retry_delay_numbers_become_timedeltas(self):
        with DAG("d"):
            task = EmptyOperator(task_id="t", retry_delay=30, max_retry_delay=600.5,
                                 retry_exponential_backoff=2.0)
            default = EmptyOperator(task_id="default")
        assert task.retry_delay == dt.timedelta(seconds=30)
        assert task.max_retry_delay == dt.timedelta(seconds=600.5)
        assert task.retry_exponential_backoff == 2.0
        assert default.retry_delay == dt.timedelta(seconds=300)
        assert default.max_retry_delay is None

    def test_retry_delay_type(self):
        with DAG("d"), pytest.raises(TypeError, match="retry_delay"):
            EmptyOperator(task_id="t", retry_delay="5 minutes")

    def test_execution_timeout_must_be_a_timedelta(self):
        with DAG("d"):
            assert EmptyOperator(task_id="t", execution_timeout=dt.timedelta(minutes=5)).execution_timeout == \
                dt.timedelta(minutes=5)
            with pytest.raises(ValueError, match="execution_timeout must be timedelta object but passed as type"):
                EmptyOperator(task_id="bad", execution_timeout=300)

    def test_wait_for_downstream_implies_depends_on_past(self):
        with DAG("d"):
            task = EmptyOperator(task_id="t", wait_for_downstream=True)
            plain = EmptyOperator(task_id="p", depends_on_past=True)
        assert task.depends_on_past is True and task.wait_for_downstream is True
        assert plain.depends_on_past is True and plain.wait_for_downstream is False

    def test_boolean_flags_are_type_checked(self):
        with DAG("d"), pytest.raises(TypeError, match="'depends_on_past' for task 't' expects"):
            EmptyOperator(task_id="t", depends_on_past="yes")


class TestTemplateFields:
    def test_template_fields_and_ext(self):
        with DAG("d"):
            bash = BashOperator(task_id="b", bash_command="script.sh")
            py = PythonOperator(task_id="p", python_callable=print, templates_exts=[".sql"])
            custom = CustomOperator(task_id="c", sql="q.sql")
        assert bash.template_fields == ("bash_command", "env", "cwd")
        assert bash.template_ext == (".sh", ".bash")
        assert py.template_fields == ("templates_dict", "op_args", "op_kwargs")
        assert py.template_ext == (".sql",)
        assert PythonOperator.template_ext == ()
        assert (custom.template_fields, custom.template_ext) == (("sql", "target"), (".sql",))

    def test_python_callable_must_be_callable(self):
        with DAG("d"), pytest.raises(AirflowException, match="`python_callable` param must be callable"):
            PythonOperator(task_id="p", python_callable="print")

    def test_doc_fields_and_display_name(self):
        with DAG("d"), TaskGroup("g"):
            task = EmptyOperator(task_id="t", doc_md="# doc", task_display_name="Nice name")
            plain = EmptyOperator(task_id="plain")
        assert task.doc_md == "# doc"
        assert (task.task_display_name, task.label) == ("Nice name", "Nice name")
        assert (plain.task_display_name, plain.label) == ("g.plain", "plain")

    def test_mapped_display_name_is_the_full_task_id_as_in_airflow(self):
        with DAG("d"), TaskGroup("g"):
            mapped = EmptyOperator.partial(task_id="m").expand(doc=["a", "b"])
            named = EmptyOperator.partial(task_id="n", task_display_name="Nice").expand(doc=["a"])
        assert (mapped.task_display_name, mapped.label) == ("g.m", "m")
        assert named.task_display_name == "Nice"


def test_operator_defaults_come_from_airflows_configuration_variables():
    import os
    import subprocess
    import sys

    code = (
        "from airflow.sdk import DAG, task\n"
        "from airflow.providers.standard.operators.empty import EmptyOperator\n"
        "with DAG('d'):\n"
        "    t = EmptyOperator(task_id='t')\n"
        "    mine = EmptyOperator(task_id='mine', retries=0, owner='me')\n"
        "    m = EmptyOperator.partial(task_id='m').expand(doc=['a'])\n"
        "print(t.retries, t.retry_delay.total_seconds(), t.owner, t.queue, mine.retries, mine.owner, m.retries,\n"
        "      t.weight_rule, t.execution_timeout.total_seconds(), m.weight_rule)\n"
    )
    env = {**os.environ, "AIRFLOW__CORE__DEFAULT_TASK_RETRIES": "2", "AIRFLOW__CORE__DEFAULT_TASK_RETRY_DELAY": "30",
           "AIRFLOW__OPERATORS__DEFAULT_OWNER": "data-eng", "AIRFLOW__OPERATORS__DEFAULT_QUEUE": "q",
           "AIRFLOW__CORE__DEFAULT_TASK_WEIGHT_RULE": "absolute", "AIRFLOW__CORE__DEFAULT_TASK_EXECUTION_TIMEOUT": "90"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2", "30.0", "data-eng", "q", "0", "me", "2", "absolute", "90.0", "absolute"]
    env["AIRFLOW__CORE__DEFAULT_TASK_RETRIES"] = "many"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60,
                            check=False)
    assert "AIRFLOW__CORE__DEFAULT_TASK_RETRIES must be an integer, got 'many'" in result.stderr


class TestAssignmentOfArguments:
    """The constructor sets its arguments as ``setattr`` would, though it stores most of them in one update: a
    subclass that intercepts assignment sees each one."""

    def test_a_property_of_a_subclass_receives_its_argument(self):
        class Pooled(BaseOperator):
            seen: ClassVar[list[str]] = []

            @property
            def pool(self) -> str:
                return self._pool

            @pool.setter
            def pool(self, value: str) -> None:
                type(self).seen.append(value)
                self._pool = value.upper()

        with DAG("d"):
            task = Pooled(task_id="t", pool="small", retries=2)
        assert (Pooled.seen, task.pool, task.retries) == (["small"], "SMALL", 2)

    def test_a_subclass_setattr_sees_every_argument(self):
        class Watched(BaseOperator):
            def __setattr__(self, key: str, value: Any) -> None:
                self.__dict__.setdefault("_set", []).append(key)
                super().__setattr__(key, value)

        with DAG("d"):
            task = Watched(task_id="t", owner="me")
        assert {"owner", "retries", "pool", "trigger_rule", "outlets", "retry_policy"} <= set(task._set)
        assert (task.owner, task.pool) == ("me", "default_pool")

    def test_the_fields_are_stored_on_the_instance(self):
        with DAG("d"):
            task = EmptyOperator(task_id="t", owner="me", pool_slots=2, inlets="a")
        assert {"owner": "me", "pool_slots": 2, "inlets": ["a"], "trigger_rule": TriggerRule.ALL_SUCCESS}.items() \
            <= vars(task).items()
