"""TaskGroups: id prefixes, nesting, collisions, wiring as one node, default_args."""

from __future__ import annotations

import pytest

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, TaskGroup, task, task_group
from updraft.sdk.exceptions import DuplicateTaskIdFound, TaskAlreadyInTaskGroup


def edges(dag: DAG) -> set[tuple[str, str]]:
    return {(t.task_id, d) for t in dag.tasks for d in t.downstream_task_ids}


class TestIds:
    def test_group_id_prefixes_task_ids_and_nests(self):
        with DAG("g") as dag, TaskGroup("outer") as outer:
            a = EmptyOperator(task_id="a")
            with TaskGroup("inner") as inner:
                b = EmptyOperator(task_id="b")
        assert (a.task_id, b.task_id) == ("outer.a", "outer.inner.b")
        assert (outer.group_id, inner.group_id) == ("outer", "outer.inner")
        assert (a.label, b.label, inner.label) == ("a", "b", "inner")
        assert a.task_group is outer and b.task_group is inner
        assert dag.task_ids == ["outer.a", "outer.inner.b"]

    def test_prefix_group_id_false(self):
        with DAG("g"), TaskGroup("outer", prefix_group_id=False) as outer:
            a = EmptyOperator(task_id="a")
            with TaskGroup("inner") as inner:
                b = EmptyOperator(task_id="b")
        assert (a.task_id, b.task_id) == ("a", "inner.b")
        assert inner.group_id == "inner"
        assert outer.group_id == "outer"

    def test_group_passed_explicitly(self):
        dag = DAG("g")
        group = TaskGroup("grp", dag=dag)
        t = EmptyOperator(task_id="t", dag=dag, task_group=group)
        assert t.task_id == "grp.t"
        assert dag.has_task("grp.t")

    def test_duplicate_group_id(self):
        with DAG("g"):
            TaskGroup("same")
            with pytest.raises(DuplicateTaskIdFound, match="group_id 'same' has already been added"):
                TaskGroup("same")

    def test_group_id_colliding_with_a_task_id(self):
        with DAG("g"):
            EmptyOperator(task_id="x")
            with pytest.raises(DuplicateTaskIdFound):
                TaskGroup("x")
            TaskGroup("y")
            with pytest.raises(DuplicateTaskIdFound):
                EmptyOperator(task_id="y")

    def test_add_suffix_on_collision(self):
        with DAG("g"):
            groups = [TaskGroup("grp", add_suffix_on_collision=True) for _ in range(3)]
            again = TaskGroup("grp__1", add_suffix_on_collision=True)
            with TaskGroup("parent"):
                nested = [TaskGroup("child", add_suffix_on_collision=True) for _ in range(3)]
        assert [g.group_id for g in groups] == ["grp", "grp__1", "grp__2"]
        assert again.group_id == "grp__3"
        assert [g.group_id for g in nested] == ["parent.child", "parent.child__1", "parent.child__2"]

    @pytest.mark.parametrize("group_id", ["has.dot", "has space", ""])
    def test_invalid_group_ids(self, group_id):
        with DAG("g"), pytest.raises(ValueError):
            TaskGroup(group_id)

    def test_group_id_length_limit_is_200(self):
        with DAG("g"):
            TaskGroup("x" * 200)
            with pytest.raises(ValueError, match="less than 200"):
                TaskGroup("y" * 201)

    def test_group_outside_a_dag(self):
        with pytest.raises(RuntimeError, match="TaskGroup can only be used inside a dag"):
            TaskGroup("lonely")

    def test_task_already_in_another_group(self):
        dag = DAG("g")
        g1, g2 = TaskGroup("g1", dag=dag), TaskGroup("g2", dag=dag)
        t = EmptyOperator(task_id="t", dag=dag, task_group=g1)
        with pytest.raises(TaskAlreadyInTaskGroup):
            g2.add(t)


class TestWiring:
    def test_group_wires_its_roots_and_leaves(self):
        with DAG("g") as dag:
            start = EmptyOperator(task_id="start")
            with TaskGroup("grp") as grp:
                a, b, c = (EmptyOperator(task_id=i) for i in "abc")
                a >> [b, c]
            end = EmptyOperator(task_id="end")
            start >> grp >> end
        assert edges(dag) == {("start", "grp.a"), ("grp.a", "grp.b"), ("grp.a", "grp.c"),
                              ("grp.b", "end"), ("grp.c", "end")}
        assert grp.upstream_task_ids == {"start"}
        assert grp.downstream_task_ids == {"end"}

    def test_group_to_group(self):
        with DAG("g") as dag:
            with TaskGroup("one") as one:
                EmptyOperator(task_id="x")
            with TaskGroup("two") as two:
                EmptyOperator(task_id="y")
            two << one
        assert edges(dag) == {("one.x", "two.y")}
        assert one.downstream_group_ids == {"two"}
        assert two.upstream_group_ids == {"one"}

    def test_empty_group_passes_its_upstream_through_as_in_airflow(self):
        with DAG("g") as dag:
            a, b = EmptyOperator(task_id="a"), EmptyOperator(task_id="b")
            empty = TaskGroup("empty")
            a >> empty >> b
        assert edges(dag) == {("a", "b")}

    def test_empty_group_wired_on_one_side_is_a_no_op(self):
        with DAG("g") as dag:
            a = EmptyOperator(task_id="a")
            empty = TaskGroup("empty")
            empty >> a
            a >> TaskGroup("other")
        assert edges(dag) == set()


class TestDefaultArgs:
    def test_group_default_args_between_dag_and_task(self):
        with DAG("g", default_args={"retries": 1, "owner": "dag", "queue": "q"}):
            with TaskGroup("outer", default_args={"retries": 2, "owner": "outer"}):
                with TaskGroup("inner", default_args={"retries": 3}):
                    t = EmptyOperator(task_id="t")
                    own = EmptyOperator(task_id="own", default_args={"retries": 4})
                    explicit = EmptyOperator(task_id="explicit", retries=5, default_args={"retries": 4})
                u = EmptyOperator(task_id="u")
            v = EmptyOperator(task_id="v")
        assert (t.retries, t.owner, t.queue) == (3, "outer", "q")
        assert (own.retries, explicit.retries, u.retries, v.retries) == (4, 5, 2, 1)


class TestTaskGroupDecorator:
    def test_returns_the_forwarded_value(self):
        with DAG("g") as dag:
            @task
            def produce():
                return 1

            @task
            def consume(x):
                return x

            @task_group
            def grp(value):
                """Tooltip text."""
                return consume(value)

            out = grp(produce())
            end = EmptyOperator(task_id="end")
            out >> end
        assert edges(dag) == {("produce", "grp.consume"), ("grp.consume", "end")}
        assert dag.task_group.children["grp"].tooltip == "Tooltip text."

    def test_returns_the_group_when_the_function_returns_nothing(self):
        with DAG("g") as dag:
            @task_group(group_id="named")
            def grp():
                EmptyOperator(task_id="a") >> EmptyOperator(task_id="b")

            result = grp()
            result >> EmptyOperator(task_id="end")
        assert isinstance(result, TaskGroup)
        assert edges(dag) == {("named.a", "named.b"), ("named.b", "end")}

    def test_calling_twice_suffixes_the_group(self):
        with DAG("g") as dag:
            @task_group
            def grp():
                EmptyOperator(task_id="a")

            grp()
            grp()
            grp.override(group_id="other")()
        assert dag.task_ids == ["grp.a", "grp__1.a", "other.a"]

    def test_taskflow_ids_inside_groups_are_unique_per_group(self):
        with DAG("g") as dag:
            @task
            def f():
                return 1

            f()
            with TaskGroup("grp"):
                f()
                f()
            f()
        assert dag.task_ids == ["f", "grp.f", "grp.f__1", "f__1"]


class TestLookups:
    def test_getitem_iteration_and_group_dict(self):
        with DAG("g") as dag, TaskGroup("outer") as outer:
            a = EmptyOperator(task_id="a")
            with TaskGroup("inner") as inner:
                b = EmptyOperator(task_id="b")
        assert outer["a"] is a and outer["inner"] is inner and inner["b"] is b
        with pytest.raises(KeyError):
            outer["missing"]
        assert list(outer) == [a, b]
        assert outer.has_task(b) and not inner.has_task(a)
        assert set(dag.task_group_dict) == {"outer", "outer.inner"}
        assert dag.has_task_group("outer.inner")
