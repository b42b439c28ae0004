"""Dynamic task mapping run for real: literals, XComs, cross products, expand_kwargs, reduction, empty expansions."""

from __future__ import annotations

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv


@pytest.fixture
def env(tmp_path):
    with mock_aws():
        yield RuntimeEnv(tmp_path)


def _values(env, dag_id, run_id, task_id):
    found = env.store.list_xcoms(dag_id, run_id, task_id)
    return [v for (_, k), v in sorted(found.items()) if k == "return_value"]


def test_map_over_xcom_and_reduce_the_lazy_sequence(env):
    env.add("mapx", """
    @dag(schedule=None, start_date=START)
    def mapx():
        @task
        def numbers():
            return [1, 2, 3]

        @task
        def double(x, offset):
            return x * 2 + offset

        @task
        def total(values):
            return {"sum": sum(values), "len": len(values), "first": values[0], "list": list(values)}

        total(double.partial(offset=100).expand(x=numbers()))

    mapx()
    """)
    run = env.run("mapx")
    assert env.states("mapx", run.run_id) == {"numbers": "success", "double[0]": "success",
                                              "double[1]": "success", "double[2]": "success",
                                              "total": "success"}
    assert env.xcom("mapx", run.run_id, "total") == {"sum": 312, "len": 3, "first": 102,
                                                     "list": [102, 104, 106]}


def test_cross_product_varies_the_last_argument_fastest(env):
    env.add("cross", """
    @dag(schedule=None, start_date=START)
    def cross():
        @task(map_index_template="{{ x }}{{ y }}")
        def pair(x, y, ti=None):
            return [ti.map_index, x, y]

        pair.expand(x=[1, 2], y=["a", "b", "c"])

    cross()
    """)
    run = env.run("cross")
    assert _values(env, "cross", run.run_id, "pair") == [
        [0, 1, "a"], [1, 1, "b"], [2, 1, "c"], [3, 2, "a"], [4, 2, "b"], [5, 2, "c"]]
    assert "Map index rendered as 2b" in env.log("cross", run.run_id, "pair", map_index=4)


@pytest.mark.slow
def test_classic_operator_partial_expand_and_expand_kwargs(env):
    env.add("classic_map", """
    with DAG("classic_map", schedule=None, start_date=START):
        BashOperator.partial(task_id="echo").expand(bash_command=["echo 1", "echo {{ ti.map_index }}-x"])
        PythonOperator.partial(task_id="kw", python_callable=lambda a, b: a + b).expand_kwargs(
            [{"op_args": [1, 2]}, {"op_args": [10, 20]}])

        @task
        def kwargs_list():
            return [{"a": 1, "b": 2}, {"a": 3, "b": 4}]

        @task
        def add(a, b):
            return a * b

        add.expand_kwargs(kwargs_list())
        add.override(task_id="zipped").expand_kwargs(
            kwargs_list().map(lambda d: {"a": d["a"] + 1, "b": d["b"]}))
    """)
    run = env.run("classic_map")
    states = env.states("classic_map", run.run_id)
    assert all(s == "success" for s in states.values()), states
    assert _values(env, "classic_map", run.run_id, "echo") == ["1", "1-x"]
    assert _values(env, "classic_map", run.run_id, "kw") == [3, 30]
    assert _values(env, "classic_map", run.run_id, "add") == [2, 12]
    assert _values(env, "classic_map", run.run_id, "zipped") == [4, 16]


def test_an_empty_expansion_skips_the_mapped_task(env):
    env.add("empty_map", """
    @dag(schedule=None, start_date=START)
    def empty_map():
        @task
        def nothing():
            return []

        @task
        def each(x):
            return x

        each.expand(x=nothing())

    empty_map()
    """)
    run = env.run("empty_map")
    assert env.states("empty_map", run.run_id)["each"] == "skipped"


def test_the_last_mapped_instance_to_end_runs_the_reduce_with_every_output_without_a_tick(env):
    # The mapped instances' ends are counted (no read of the run): the last one's end schedules the reduce.
    env.add("mapcount", """
    @dag(schedule=None, start_date=START)
    def mapcount():
        @task
        def square(x):
            return x * x

        @task
        def total(values):
            return sorted(values)

        total(square.expand(x=[1, 2, 3, 4, 5, 6]))

    mapcount()
    """)
    run = env.trigger("mapcount")
    env.scheduler.run_pass()
    env.drain()
    assert env.store.get_run("mapcount", run.run_id).state == "success"
    assert env.xcom("mapcount", run.run_id, "total") == [1, 4, 9, 16, 25, 36]
    _, _, _, ends = env.store.get_run_meta_and_tis("mapcount", run.run_id, ())
    assert (ends.counts, ends.expanded) == ({"square": 6}, {"square": 6})
