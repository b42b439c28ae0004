"""BashOperator, @task.bash, branching and short-circuit, as Airflow 3 ends them."""

from __future__ import annotations

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv


@pytest.fixture
def env(tmp_path):
    with mock_aws():
        yield RuntimeEnv(tmp_path)


@pytest.mark.slow
def test_bash_last_line_is_the_xcom_99_skips_other_codes_fail(env):
    env.add("bash", """
    with DAG("bash", schedule=None, start_date=START, params={"who": "you"}):
        BashOperator(task_id="ok", bash_command="echo first; echo 'hi {{ params.who }}' $EXTRA",
                     env={"EXTRA": "x"}, append_env=True)
        BashOperator(task_id="skip", bash_command="exit 99")
        BashOperator(task_id="fail", bash_command="echo oops >&2; exit 3")
        BashOperator(task_id="ctx", bash_command="echo $AIRFLOW_CTX_DAG_ID/$AIRFLOW_CTX_TASK_ID")

        @task.bash
        def from_function(word):
            return "echo {{ ti.task_id }}-" + word

        from_function("w")
    """)
    run = env.run("bash")
    assert env.states("bash", run.run_id) == {"ok": "success", "skip": "skipped", "fail": "failed",
                                              "ctx": "success", "from_function": "success"}
    assert env.xcom("bash", run.run_id, "ok") == "hi you x"
    assert env.xcom("bash", run.run_id, "ctx") == "bash/ctx"
    assert env.xcom("bash", run.run_id, "from_function") == "from_function-w"
    assert "non-zero exit code 3" in env.ti("bash", run.run_id, "fail").note
    log = env.log("bash", run.run_id, "fail")
    assert "oops" in log and "Command exited with return code 3" in log


def test_branch_follows_one_path_and_the_join_still_runs(env):
    env.add("branch", """
    with DAG("branch", schedule=None, start_date=START):
        pick = BranchPythonOperator(task_id="pick", python_callable=lambda: "a")
        a = EmptyOperator(task_id="a")
        b = PythonOperator(task_id="b", python_callable=lambda: 1)
        after_b = EmptyOperator(task_id="after_b")
        join = EmptyOperator(task_id="join", trigger_rule="none_failed_min_one_success")
        pick >> [a, b]
        b >> after_b
        [a, after_b] >> join

        @task.branch
        def choose():
            return ["x", "y"]

        c = choose()
        c >> [EmptyOperator(task_id="x"), EmptyOperator(task_id="y"), EmptyOperator(task_id="z")]
    """)
    run = env.run("branch")
    assert env.states("branch", run.run_id) == {
        "pick": "success", "a": "success", "b": "skipped", "after_b": "skipped", "join": "success",
        "choose": "success", "x": "success", "y": "success", "z": "skipped"}
    assert env.xcom("branch", run.run_id, "pick") == "a"


def test_short_circuit_skips_all_downstream_or_only_direct_ones(env):
    env.add("sc", """
    with DAG("sc", schedule=None, start_date=START):
        no = ShortCircuitOperator(task_id="no", python_callable=lambda: [])
        n1 = EmptyOperator(task_id="n1")
        n2 = EmptyOperator(task_id="n2", trigger_rule="all_done")
        no >> n1 >> n2

        keep = ShortCircuitOperator(task_id="keep", python_callable=lambda: False,
                                    ignore_downstream_trigger_rules=False)
        k1 = EmptyOperator(task_id="k1")
        k2 = EmptyOperator(task_id="k2", trigger_rule="all_done")
        keep >> k1 >> k2

        yes = ShortCircuitOperator(task_id="yes", python_callable=lambda: True)
        yes >> EmptyOperator(task_id="y1")
    """)
    run = env.run("sc")
    assert env.states("sc", run.run_id) == {
        "no": "success", "n1": "skipped", "n2": "skipped",
        "keep": "success", "k1": "skipped", "k2": "success",
        "yes": "success", "y1": "success"}


@pytest.mark.slow
def test_sensors_poke_until_done_time_out_or_soft_fail(env):
    env.add("sensors", """
    from airflow.providers.standard.sensors.python import PythonSensor
    from airflow.providers.standard.sensors.date_time import DateTimeSensor
    from airflow.sdk.bases.sensor import PokeReturnValue

    calls = []

    def third_time_lucky():
        calls.append(1)
        return len(calls) >= 3

    with DAG("sensors", schedule=None, start_date=START):
        PythonSensor(task_id="lucky", python_callable=third_time_lucky, poke_interval=0.01)
        PythonSensor(task_id="never", python_callable=lambda: False, poke_interval=0.01, timeout=0.05,
                     retries=3)
        PythonSensor(task_id="soft", python_callable=lambda: False, poke_interval=0.01, timeout=0.05,
                     soft_fail=True)
        DateTimeSensor(task_id="past", target_time="{{ data_interval_start }}", poke_interval=0.01)

        @task.sensor(poke_interval=0.01)
        def with_value():
            return PokeReturnValue(is_done=True, xcom_value={"found": 1})

        with_value()
    """)
    run = env.run("sensors")
    assert env.states("sensors", run.run_id) == {"lucky": "success", "never": "failed", "soft": "skipped",
                                                 "past": "success", "with_value": "success"}
    never = env.ti("sensors", run.run_id, "never")
    assert never.try_number == 1 and "Sensor has timed out" in never.note
    assert env.xcom("sensors", run.run_id, "with_value") == {"found": 1}
