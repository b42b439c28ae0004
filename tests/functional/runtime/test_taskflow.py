"""TaskFlow and classic operators run for real: XCom passing, multiple_outputs, ``.output``, context kwargs."""

from __future__ import annotations

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv


@pytest.fixture
def env(tmp_path):
    with mock_aws():
        yield RuntimeEnv(tmp_path)


def test_taskflow_values_flow_through_xcom(env):
    env.add("flow", """
    @dag(schedule=None, start_date=START)
    def flow():
        @task
        def produce():
            return {"a": 1, "b": [1, 2]}

        @task(multiple_outputs=True)
        def split(d):
            return {"x": d["a"], "y": sum(d["b"])}

        @task
        def total(x, y, ti=None):
            return x + y + ti.xcom_pull(task_ids="split", key="x")

        s = split(produce())
        total(s["x"], s["y"])

    flow()
    """)
    run = env.run("flow")
    assert run.state == "success", env.states("flow", run.run_id)
    assert env.xcom("flow", run.run_id, "produce") == {"a": 1, "b": [1, 2]}
    assert env.xcom("flow", run.run_id, "split", "x") == 1
    assert env.xcom("flow", run.run_id, "split", "y") == 3
    assert env.xcom("flow", run.run_id, "split") == {"x": 1, "y": 3}
    assert env.xcom("flow", run.run_id, "total") == 5


def test_classic_operators_and_output_and_context_kwargs(env):
    env.add("classic", """
    def make(**context):
        return [context["ti"].task_id, context["run_id"] == context["dag_run"].run_id]

    def use(value, ti, params):
        assert get_current_context()["ti"] is ti
        return {"got": value, "n": params["n"], "pulled": ti.xcom_pull(task_ids="make")}

    with DAG("classic", schedule=None, start_date=START, params={"n": 3}):
        make_t = PythonOperator(task_id="make", python_callable=make)
        PythonOperator(task_id="use", python_callable=use, op_args=[make_t.output])
        EmptyOperator(task_id="nothing")
    """)
    run = env.run("classic")
    assert env.states("classic", run.run_id) == {"make": "success", "use": "success", "nothing": "success"}
    assert env.xcom("classic", run.run_id, "use") == {"got": ["make", True], "n": 3, "pulled": ["make", True]}


def test_do_xcom_push_false_and_none_push_nothing(env):
    env.add("nopush", """
    with DAG("nopush", schedule=None, start_date=START):
        PythonOperator(task_id="quiet", python_callable=lambda: 5, do_xcom_push=False)
        PythonOperator(task_id="none", python_callable=lambda: None)
    """)
    run = env.run("nopush")
    assert run.state == "success"
    assert env.store.list_xcoms("nopush", run.run_id, "quiet") == {}
    assert env.store.list_xcoms("nopush", run.run_id, "none") == {}


def test_a_value_that_is_not_json_fails_the_task_clearly(env):
    env.add("badxcom", """
    with DAG("badxcom", schedule=None, start_date=START):
        PythonOperator(task_id="obj", python_callable=lambda: object())
    """)
    run = env.run("badxcom")
    ti = env.ti("badxcom", run.run_id, "obj")
    assert ti.state == "failed"
    assert "not JSON-serializable" in ti.note


def test_dag_function_arguments_resolve_from_params_and_conf(env):
    env.add("dagparam", """
    @dag(schedule=None, start_date=START)
    def dagparam(word="default", n=2):
        @task
        def use(w, k):
            return f"{w}-{k}"

        use(word, n)

    dagparam()
    """)
    run = env.run("dagparam")
    assert env.xcom("dagparam", run.run_id, "use") == "default-2"
    env.clock.advance(seconds=1)
    run = env.run("dagparam", conf={"word": "conf"})
    assert env.xcom("dagparam", run.run_id, "use") == "conf-2"


def test_xcom_pull_include_prior_dates_reads_the_latest_earlier_run(env):
    env.add("prior", """
    @dag(schedule=None, start_date=START)
    def prior():
        @task
        def counter(ti=None, dag_run=None):
            previous = ti.xcom_pull(task_ids="counter", key="count", include_prior_dates=True, default=0)
            ti.xcom_push("count", previous + 1)
            return previous

        counter()

    prior()
    """)
    first = env.run("prior")
    env.clock.advance(hours=1)
    second = env.run("prior")
    assert env.xcom("prior", first.run_id, "counter", "count") == 1
    assert env.xcom("prior", second.run_id, "counter", "count") == 2
    assert env.xcom("prior", second.run_id, "counter") == 1


def test_tuples_sets_and_named_tuples_come_back_as_airflow_s_serde_gives_them(env):
    """Airflow keeps a returned tuple a tuple (a named tuple as a plain one), a set a set, at any depth, and maps
    over a returned tuple; they are stored tagged as serde tags them."""
    env.add("shapes", """
    import collections

    Point = collections.namedtuple("Point", "x y")

    @dag(schedule=None, start_date=START)
    def shapes():
        @task
        def produce():
            return {"row": (1, "a"), "rows": [(1, 2), (3, 4)], "tags": {"b", "a"}, "frozen": frozenset([1]),
                    "point": Point(1, 2)}

        @task
        def check(v):
            assert v["row"] == (1, "a") and type(v["row"]) is tuple, v
            assert [type(r) for r in v["rows"]] == [tuple, tuple], v
            assert v["tags"] == {"a", "b"} and type(v["tags"]) is set, v
            assert v["frozen"] == frozenset([1]) and type(v["frozen"]) is frozenset, v
            assert v["point"] == (1, 2) and type(v["point"]) is tuple, v

        @task
        def pair():
            return ("x", ("y", 2))

        @task
        def each(item):
            return [item, type(item).__name__]

        check(produce())
        each.expand(item=pair())

    shapes()
    """)
    run = env.run("shapes")
    assert run.state == "success", env.states("shapes", run.run_id)
    stored = env.xcom("shapes", run.run_id, "produce")
    assert stored["row"] == {"__classname__": "builtins.tuple", "__version__": 1, "__data__": [1, "a"]}
    assert stored["tags"] == {"__classname__": "builtins.set", "__version__": 1, "__data__": ["a", "b"]}
    assert [env.xcom("shapes", run.run_id, "each", map_index=i) for i in (0, 1)] == [
        ["x", "str"], [{"__classname__": "builtins.tuple", "__version__": 1, "__data__": ["y", 2]}, "tuple"]]
