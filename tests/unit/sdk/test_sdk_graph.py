"""Whole-graph computations: effective priority weights (Airflow's priority_weight_total) and cycles."""

from __future__ import annotations

import pytest

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, chain
from updraft.sdk.exceptions import AirflowDagCycleException


def diamond(rule: str, weights: dict[str, int] | None = None) -> DAG:
    """a -> (b, c) -> d."""
    weights = weights or {}
    with DAG(f"diamond_{rule}") as dag:
        a, b, c, d = (EmptyOperator(task_id=i, weight_rule=rule, priority_weight=weights.get(i, 1)) for i in "abcd")
        a >> [b, c] >> d
    return dag


def airflow_total(dag: DAG, task_id: str) -> int:
    """Airflow 3's strategies verbatim: own weight plus every flat relative's weight, each once."""
    task = dag.get_task(task_id)
    if task.weight_rule == "absolute":
        return task.priority_weight
    upstream = task.weight_rule == "upstream"
    seen: set[str] = set()
    frontier = set(task.upstream_task_ids if upstream else task.downstream_task_ids)
    while frontier:
        seen |= frontier
        nxt = set()
        for tid in frontier:
            t = dag.get_task(tid)
            nxt |= (t.upstream_task_ids if upstream else t.downstream_task_ids)
        frontier = nxt - seen
    return task.priority_weight + sum(dag.get_task(t).priority_weight for t in seen)


class TestPriorityWeights:
    def test_downstream_diamond_counts_the_shared_task_once(self):
        assert diamond("downstream").priority_weights() == {"a": 4, "b": 2, "c": 2, "d": 1}

    def test_upstream_diamond(self):
        assert diamond("upstream").priority_weights() == {"a": 1, "b": 2, "c": 2, "d": 4}

    def test_absolute(self):
        assert diamond("absolute", {"a": 7, "d": 3}).priority_weights() == {"a": 7, "b": 1, "c": 1, "d": 3}

    def test_weighted_diamond(self):
        weights = {"a": 10, "b": 20, "c": 30, "d": 40}
        assert diamond("downstream", weights).priority_weights() == {"a": 100, "b": 60, "c": 70, "d": 40}
        assert diamond("upstream", weights).priority_weights() == {"a": 10, "b": 30, "c": 40, "d": 100}

    @pytest.mark.parametrize("rule", ["downstream", "upstream", "absolute"])
    def test_chain(self, rule):
        with DAG("chain") as dag:
            tasks = [EmptyOperator(task_id=f"t{i}", weight_rule=rule, priority_weight=i + 1) for i in range(5)]
            chain(*tasks)
        weights = dag.priority_weights()
        expected = {
            "downstream": [15, 14, 12, 9, 5],
            "upstream": [1, 3, 6, 10, 15],
            "absolute": [1, 2, 3, 4, 5],
        }[rule]
        assert [weights[f"t{i}"] for i in range(5)] == expected

    def test_mixed_rules_and_negative_weights_match_airflows_formula(self):
        with DAG("mixed") as dag:
            tasks = {}
            rules = ["downstream", "upstream", "absolute"]
            for i in range(30):
                tasks[i] = EmptyOperator(task_id=f"t{i:02d}", weight_rule=rules[i % 3], priority_weight=(i * 7) % 11 - 3)
            for i in range(30):
                for j in (i + 1, i + 3, i + 7):
                    if j < 30:
                        tasks[i] >> tasks[j]
        weights = dag.priority_weights()
        assert weights == {tid: airflow_total(dag, tid) for tid in dag.task_ids}

    def test_totals_are_clamped_to_32_bits(self):
        big = 2**31 - 1
        with DAG("clamp") as dag:
            a, b = (EmptyOperator(task_id=i, priority_weight=big) for i in "ab")
            a >> b
        assert dag.priority_weights() == {"a": big, "b": big}

    def test_deep_chain(self):
        with DAG("deep") as dag:
            chain(*(EmptyOperator(task_id=f"t{i:04d}") for i in range(2000)))
        weights = dag.priority_weights()
        assert (weights["t0000"], weights["t1999"]) == (2000, 1)


class TestCycles:
    def test_no_cycle(self):
        dag = diamond("downstream")
        assert dag.find_cycle() is None
        dag.validate()
        assert [t.task_id for t in dag.topological_sort()] == ["a", "b", "c", "d"]

    def test_cycle_path_is_returned_and_named_in_the_error(self):
        with DAG("cyclic") as dag:
            a, b, c, d = (EmptyOperator(task_id=i) for i in "abcd")
            d >> a >> b >> c >> a
        assert dag.find_cycle() == ["a", "b", "c", "a"]
        with pytest.raises(AirflowDagCycleException) as info:
            dag.validate()
        message = str(info.value)
        assert "Cycle detected in DAG: cyclic" in message
        assert "a >> b >> c >> a" in message

    def test_self_loop(self):
        with DAG("loop") as dag:
            a = EmptyOperator(task_id="a")
            a >> a
        assert dag.find_cycle() == ["a", "a"]
        with pytest.raises(AirflowDagCycleException, match="a >> a"):
            dag.validate()

    def test_cycle_through_a_group(self):
        from airflow.sdk import TaskGroup

        with DAG("grp_cycle") as dag:
            with TaskGroup("g") as g:
                inner = EmptyOperator(task_id="inner")
            outer = EmptyOperator(task_id="outer")
            g >> outer >> inner
        assert dag.find_cycle() == ["g.inner", "outer", "g.inner"]

    def test_topological_sort_raises_on_a_cycle(self):
        with DAG("c") as dag:
            a, b = (EmptyOperator(task_id=i) for i in "ab")
            a >> b >> a
        with pytest.raises(AirflowDagCycleException):
            dag.topological_sort()
        with pytest.raises(AirflowDagCycleException):
            dag.priority_weights()

    def test_long_chain_with_a_back_edge_has_no_recursion_error(self):
        with DAG("long") as dag:
            tasks = [EmptyOperator(task_id=f"t{i:04d}") for i in range(2000)]
            chain(*tasks)
            tasks[-1] >> tasks[0]
        cycle = dag.find_cycle()
        assert cycle is not None
        assert len(cycle) == 2001 and cycle[0] == cycle[-1] == "t0000"
        with pytest.raises(AirflowDagCycleException, match="t1999 >> t0000"):
            dag.validate()

    def test_long_chain_without_a_cycle(self):
        with DAG("long_ok") as dag:
            chain(*(EmptyOperator(task_id=f"t{i:04d}") for i in range(2000)))
        dag.validate()
        assert dag.topological_sort()[0].task_id == "t0000"
