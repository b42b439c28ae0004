"""Context values and Jinja templating, for scheduled and manual runs."""

from __future__ import annotations

import datetime as dt

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv
from updraft.model.records import DagRun
from updraft.model.states import DagRunState
from updraft.runtime.xcom import decode_value


@pytest.fixture
def env(tmp_path):
    with mock_aws():
        yield RuntimeEnv(tmp_path)


CONTEXT_DAG = """
@dag(schedule="@daily", start_date=START, params={"p": 1, "q": Param("x", type="string")})
def ctx():
    @task
    def show(ds, ds_nodash, ts, ts_nodash, ts_nodash_with_tz, logical_date, data_interval_start,
             data_interval_end, run_id, dag_run, params, ti, task, dag, task_instance_key_str,
             prev_data_interval_start_success, macros, var, inlets, outlets, expanded_ti_count):
        return {"ds": ds, "ds_nodash": ds_nodash, "ts": ts, "ts_nodash": ts_nodash,
                "ts_nodash_with_tz": ts_nodash_with_tz, "logical_date": logical_date.isoformat(),
                "start": data_interval_start.isoformat(), "end": data_interval_end.isoformat(),
                "run_id": run_id, "conf": dag_run.conf, "run_type": dag_run.run_type, "params": dict(params),
                "try": ti.try_number, "task": task.task_id, "dag": dag.dag_id, "key": task_instance_key_str,
                "prev": prev_data_interval_start_success and prev_data_interval_start_success.isoformat(),
                "add": macros.ds_add(ds, 1), "inlets": inlets, "count": expanded_ti_count}

    show()

ctx()
"""


def test_context_of_a_scheduled_run(env):
    env.add("ctx", CONTEXT_DAG)
    day = dt.datetime(2024, 1, 5, tzinfo=dt.UTC)
    run = DagRun(dag_id="ctx", run_id="scheduled__2024-01-05T00:00:00+00:00", run_type="scheduled",
                 dag_hash=env.store.get_dag_meta("ctx").dag_hash, state=DagRunState.QUEUED, logical_date=day,
                 data_interval_start=day, data_interval_end=day + dt.timedelta(days=1), run_after=day,
                 queued_at=env.clock())
    env.store.create_run(run)
    for _ in range(5):
        env.scheduler.run_pass()
        env.drain()
    value = env.xcom("ctx", run.run_id, "show")
    assert value == {
        "ds": "2024-01-05", "ds_nodash": "20240105", "ts": "2024-01-05T00:00:00+00:00",
        "ts_nodash": "20240105T000000", "ts_nodash_with_tz": "20240105T000000+0000",
        "logical_date": "2024-01-05T00:00:00+00:00", "start": "2024-01-05T00:00:00+00:00",
        "end": "2024-01-06T00:00:00+00:00", "run_id": run.run_id, "conf": {}, "run_type": "scheduled",
        "params": {"p": 1, "q": "x"}, "try": 1, "task": "show", "dag": "ctx", "key": "ctx__show__20240105",
        "prev": None, "add": "2024-01-06", "inlets": [], "count": None,
    }


def test_context_of_a_manual_run_with_conf_overriding_params(env):
    env.add("ctx", CONTEXT_DAG)
    run = env.run("ctx", conf={"p": 7})
    value = env.xcom("ctx", run.run_id, "show")
    assert value["run_type"] == "manual"
    assert value["conf"] == {"p": 7}
    assert value["params"] == {"p": 7, "q": "x"}
    assert value["ds"] == run.logical_date.strftime("%Y-%m-%d")


def test_templated_fields_files_macros_filters_params_conf_var(env, monkeypatch):
    monkeypatch.setenv("AIRFLOW_VAR_GREETING", "hello")
    monkeypatch.setenv("AIRFLOW_VAR_CFG", '{"depth": 3}')
    env.add("tpl", """
    def ret(*args, **kwargs):
        return {"args": list(args), "kwargs": {k: kwargs[k] for k in ("a", "b", "c")},
                "templates_dict": kwargs["templates_dict"]}

    with DAG("tpl", schedule=None, start_date=START, params={"name": "world"},
             template_searchpath=[__import__("os").path.dirname(__file__) + "/sql"],
             user_defined_macros={"twice": lambda v: v * 2},
             user_defined_filters={"shout": lambda v: v.upper()}):
        PythonOperator(
            task_id="py",
            python_callable=ret,
            op_args=["{{ logical_date | ds_nodash }}", ("{{ params.name }}", 1)],
            op_kwargs={"a": "{{ var.value.greeting }} {{ var.json.cfg.depth }}",
                       "b": "{{ twice(2) }} {{ 'x' | shout }} {{ macros.ds_add('2024-01-01', 2) }}",
                       "c": "{{ dag_run.conf.get('k', 'none') }} {{ task.task_id }} {{ ti.try_number }}"},
            templates_dict={"query": "query.sql"},
            templates_exts=[".sql"],
        )
    """, extra_files={"sql/query.sql": "SELECT '{{ params.name }}'"})
    run = env.run("tpl", conf={"k": "v"})
    assert env.states("tpl", run.run_id) == {"py": "success"}, env.log("tpl", run.run_id, "py")
    value = decode_value(env.xcom("tpl", run.run_id, "py"))
    assert value["args"] == [run.logical_date.strftime("%Y%m%d"), ("world", 1)]  # a rendered tuple stays one
    assert value["kwargs"] == {"a": "hello 3", "b": "4 X 2024-01-03", "c": "v py 1"}
    assert value["templates_dict"] == {"query": "SELECT 'world'"}


def test_native_rendering_and_strict_undefined(env):
    env.add("native", """
    with DAG("native", schedule=None, start_date=START, render_template_as_native_obj=True,
             params={"items": [1, 2]}):
        PythonOperator(task_id="native", python_callable=lambda v: [type(v).__name__, v],
                       op_args=["{{ params['items'] }}"])
        PythonOperator(task_id="undefined", python_callable=lambda v: v, op_args=["{{ nope }}"])
    """)
    run = env.run("native")
    assert env.xcom("native", run.run_id, "native") == ["list", [1, 2]]
    ti = env.ti("native", run.run_id, "undefined")
    assert ti.state == "failed" and "nope" in ti.note


def test_prev_data_interval_success_comes_from_the_latest_earlier_successful_run(env):
    env.add("ctx", CONTEXT_DAG)
    dag_hash = env.store.get_dag_meta("ctx").dag_hash
    days = [dt.datetime(2024, 1, d, tzinfo=dt.UTC) for d in (3, 4, 5)]
    for day, state in zip(days, [DagRunState.SUCCESS, DagRunState.FAILED, DagRunState.QUEUED], strict=True):
        env.store.create_run(DagRun(dag_id="ctx", run_id=f"scheduled__{day.isoformat()}", run_type="scheduled",
                                    dag_hash=dag_hash, state=state, logical_date=day, data_interval_start=day,
                                    data_interval_end=day + dt.timedelta(days=1), run_after=day,
                                    queued_at=env.clock()))
    current = f"scheduled__{days[2].isoformat()}"
    for _ in range(5):
        env.scheduler.run_pass()
        env.drain()
    assert env.xcom("ctx", current, "show")["prev"] == "2024-01-03T00:00:00+00:00"


def test_the_tasks_code_sees_its_airflow_ctx_variables_in_the_environment(env, monkeypatch):
    import os

    for name in ("AIRFLOW_CTX_DAG_ID", "AIRFLOW_CTX_TASK_ID", "AIRFLOW_CTX_TRY_NUMBER", "AIRFLOW_CTX_DAG_RUN_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(os, "environ", os.environ.copy())  # the task's exports stay in this test
    env.add("envy", """
    @dag(schedule=None, start_date=START)
    def envy():
        @task
        def look():
            import os
            return {k: os.environ.get(k) for k in ("AIRFLOW_CTX_DAG_ID", "AIRFLOW_CTX_TASK_ID",
                                                   "AIRFLOW_CTX_TRY_NUMBER", "AIRFLOW_CTX_DAG_RUN_ID")}

        look()

    envy()
    """)
    run = env.run("envy")
    assert env.xcom("envy", run.run_id, "look") == {
        "AIRFLOW_CTX_DAG_ID": "envy", "AIRFLOW_CTX_TASK_ID": "look", "AIRFLOW_CTX_TRY_NUMBER": "1",
        "AIRFLOW_CTX_DAG_RUN_ID": run.run_id}


def test_a_task_renders_a_template_with_its_own_render_template(env):
    """Airflow's ``context["task"].render_template(...)`` (tutorial_taskflow_templates.py): the DAG's Jinja
    environment and the try's context, collections rendered member by member; another environment is refused."""
    env.add("rt", """
    @dag(schedule=None, start_date=START, params={"other_param": "from_dag"}, user_defined_macros={"twice": 2})
    def rt():
        @task
        def show():
            context = get_current_context()
            render = context["task"].render_template
            try:
                render("x", context, jinja_env=object())
            except ImportError as error:
                refused = str(error)
            return [render("run_id: {{ run_id }}; {{ params.other_param }}", context),
                    render(["{{ twice * 2 }}", {"k": "{{ task.task_id }}"}], context), refused]

        show()

    rt()
    """)
    run = env.run("rt")
    assert env.xcom("rt", run.run_id, "show") == [
        f"run_id: {run.run_id}; from_dag", ["4", {"k": "show"}],
        "Updraft does not support render_template(jinja_env=...): templates render with the DAG's own Jinja "
        "environment (template_searchpath, user_defined_macros/filters)"]
