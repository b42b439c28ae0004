"""``>>``/``<<`` on tasks, lists, XComArgs, TaskGroups and Labels; chain, chain_linear, cross_downstream."""

from __future__ import annotations

import pytest

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Label, TaskGroup, XComArg, chain, chain_linear, cross_downstream, task


def edges(dag: DAG) -> set[tuple[str, str]]:
    return {(t.task_id, d) for t in dag.tasks for d in t.downstream_task_ids}


def ops(*ids: str) -> list[EmptyOperator]:
    return [EmptyOperator(task_id=i) for i in ids]


class TestShiftOperators:
    def test_task_to_task_both_directions(self):
        with DAG("d") as dag:
            a, b, c = ops("a", "b", "c")
            result = a >> b
            c << b
        assert result is b
        assert edges(dag) == {("a", "b"), ("b", "c")}
        assert a.downstream_task_ids == {"b"} and b.upstream_task_ids == {"a"}

    def test_lists_on_either_side(self):
        with DAG("d") as dag:
            a, b, c, d, e = ops("a", "b", "c", "d", "e")
            a >> [b, c] >> d
            [a, b] << e
        assert edges(dag) == {("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("e", "a"), ("e", "b")}

    def test_setting_an_edge_twice_is_one_edge(self):
        with DAG("d") as dag:
            a, b = ops("a", "b")
            a >> b
            b << a
        assert edges(dag) == {("a", "b")}

    def test_relationship_to_a_non_task_is_refused(self):
        with DAG("d"):
            (a,) = ops("a")
            with pytest.raises(TypeError):
                a >> "b"

    def test_xcomargs_wire_their_producers(self):
        with DAG("d") as dag:
            @task
            def make():
                return 1

            @task
            def use(x):
                return x

            (start,) = ops("start")
            out = make()
            start >> out >> use(out)
            (end,) = ops("end")
            [out, start] >> end
        assert edges(dag) == {("start", "make"), ("make", "use"), ("make", "end"), ("start", "end")}

    def test_operator_output_and_xcomarg_constructor(self):
        with DAG("d") as dag:
            a, b = ops("a", "b")
            XComArg(a) >> b
            assert a.output == XComArg(a)
            assert XComArg(a, "k").key == "k"
        assert edges(dag) == {("a", "b")}

    def test_xcomarg_in_a_template_field_wires_the_dependency(self):
        from airflow.providers.standard.operators.bash import BashOperator

        with DAG("d") as dag:
            (a,) = ops("a")
            BashOperator(task_id="b", bash_command=a.output)
            late = BashOperator(task_id="c", bash_command="echo")
            late.bash_command = a.output["key"]
        assert edges(dag) == {("a", "b"), ("a", "c")}

    def test_xcomarg_is_not_iterable_but_is_truthy_and_templates_as_jinja(self):
        with DAG("d"):
            (a,) = ops("a")
            with pytest.raises(TypeError, match="not iterable"):
                list(a.output)
            assert bool(a.output)  # Airflow does not forbid `if xcom:`; it is always true
            assert str(a.output) == ("{{ task_instance.xcom_pull(task_ids='a', dag_id='d', "
                                     "key='return_value') }}")


class TestAcrossDags:
    def test_relationships_between_two_dags_are_refused(self):
        d1, d2 = DAG("one"), DAG("two")
        a = EmptyOperator(task_id="a", dag=d1)
        b = EmptyOperator(task_id="b", dag=d2)
        with pytest.raises(RuntimeError, match="more than one Dag"):
            a >> b

    def test_a_task_joins_the_dag_it_is_wired_to(self):
        dag = DAG("one")
        a = EmptyOperator(task_id="a", dag=dag)
        b = EmptyOperator(task_id="b")
        c = EmptyOperator(task_id="c")
        a >> b
        c >> [b]
        assert b.dag is dag and c.dag is dag
        assert dag.task_ids == ["a", "b", "c"]

    def test_tasks_without_any_dag_cannot_be_wired(self):
        a, b = EmptyOperator(task_id="a"), EmptyOperator(task_id="b")
        with pytest.raises(ValueError, match="don't have Dags yet"):
            a >> b

    def test_a_task_cannot_change_dag(self):
        d1, d2 = DAG("one"), DAG("two")
        a = EmptyOperator(task_id="a", dag=d1)
        with pytest.raises(ValueError, match="can not be changed"):
            a.dag = d2


class TestLabels:
    def test_label_between_tasks_and_lists(self):
        with DAG("l") as dag:
            a, b, c, x = ops("a", "b", "c", "x")
            a >> Label("yes") >> b
            c << Label("no") << a
            [b, c] >> Label("join") >> x
        assert edges(dag) == {("a", "b"), ("a", "c"), ("b", "x"), ("c", "x")}
        assert dag.get_edge_info("a", "b") == {"label": "yes"}
        assert dag.get_edge_info("a", "c") == {"label": "no"}
        assert dag.get_edge_info("b", "x") == dag.get_edge_info("c", "x") == {"label": "join"}
        assert dag.get_edge_info("x", "a") == {}

    def test_label_wired_downstream_first(self):
        with DAG("l") as dag:
            a, b = ops("a", "b")
            label = Label("later")
            label >> b
            a >> label
        assert edges(dag) == {("a", "b")}
        assert dag.get_edge_info("a", "b") == {"label": "later"}

    def test_label_to_a_group_labels_the_edges_into_its_roots(self):
        with DAG("l") as dag:
            (a,) = ops("a")
            with TaskGroup("g") as g:
                i1, i2 = ops("i1", "i2")
                i1 >> i2
            a >> Label("into g") >> g
        assert edges(dag) == {("a", "g.i1"), ("g.i1", "g.i2")}
        assert dag.get_edge_info("a", "g.i1") == {"label": "into g"}

    def test_label_with_set_downstream_edge_modifier(self):
        with DAG("l") as dag:
            a, b = ops("a", "b")
            a.set_downstream(b, edge_modifier=Label("direct"))
        assert dag.get_edge_info("a", "b") == {"label": "direct"}


class TestChain:
    def test_chain_with_equal_length_lists(self):
        with DAG("c") as dag:
            a, b, c, d, e, f = ops("a", "b", "c", "d", "e", "f")
            chain(a, [b, c], [d, e], f)
        assert edges(dag) == {("a", "b"), ("a", "c"), ("b", "d"), ("c", "e"), ("d", "f"), ("e", "f")}

    def test_chain_with_unequal_lists(self):
        with DAG("c"):
            a, b, c = ops("a", "b", "c")
            with pytest.raises(ValueError, match=r"different length Iterable\. Got 2 and 1"):
                chain([a, b], [c])

    def test_chain_of_non_tasks(self):
        with pytest.raises(TypeError, match="Chain not supported between instances"):
            chain(1, 2)

    def test_chain_with_labels_xcomargs_and_groups(self):
        with DAG("c") as dag:
            @task
            def x():
                return 1

            (t1,) = ops("t1")
            with TaskGroup("g") as g:
                ops("inner")
            x1, x2 = x(), x()
            chain(t1, [Label("one"), Label("two")], [x1, x2], g)
        assert edges(dag) == {("t1", "x"), ("t1", "x__1"), ("x", "g.inner"), ("x__1", "g.inner")}
        assert dag.get_edge_info("t1", "x") == {"label": "one"}
        assert dag.get_edge_info("t1", "x__1") == {"label": "two"}

    def test_chain_linear(self):
        with DAG("c") as dag:
            a, b, c, d, e, f, g = ops("a", "b", "c", "d", "e", "f", "g")
            chain_linear(a, [b, c], [d, e, f], g)
        expected = {("a", "b"), ("a", "c"), *((u, v) for u in "bc" for v in "def"), ("d", "g"), ("e", "g"),
                    ("f", "g")}
        assert edges(dag) == expected

    def test_chain_linear_errors(self):
        with pytest.raises(ValueError, match="No tasks provided"):
            chain_linear()
        with DAG("c"):
            a, b = ops("a", "b")
            with pytest.raises(ValueError, match="Did you forget to expand with"):
                chain_linear([a, b])
            with pytest.raises(ValueError, match="Labels are not supported by chain_linear"):
                chain_linear(a, Label("x"), b)

    def test_cross_downstream(self):
        with DAG("c") as dag:
            a, b, c, d = ops("a", "b", "c", "d")
            cross_downstream([a, b], [c, d])
        assert edges(dag) == {("a", "c"), ("a", "d"), ("b", "c"), ("b", "d")}

    def test_cross_downstream_with_xcomargs(self):
        with DAG("c") as dag:
            @task
            def x():
                return 1

            a, b = ops("a", "b")
            cross_downstream([a, x()], [x(), b])
        assert edges(dag) == {("a", "x__1"), ("a", "b"), ("x", "x__1"), ("x", "b")}
