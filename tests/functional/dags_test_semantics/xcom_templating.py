"""XComs and templates: xcom_pull, ``{{ ds }}``, ``{{ params.x }}``, conf overriding params, BashOperator XCom."""

import datetime

from airflow.exceptions import AirflowFailException
from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, Param, task


def _expect(got, expected):
    if got != expected:
        raise AirflowFailException(f"got {got!r}, expected {expected!r}")


for dag_id in ("xcom_templating", "xcom_templating_conf"):
    # The test runs ``xcom_templating`` without conf and ``xcom_templating_conf`` with conf={"x": 7}.
    expected_x = 3 if dag_id == "xcom_templating" else 7
    with DAG(dag_id, schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
             params={"x": Param(3, type="integer")}):

        @task
        def push(ti=None):
            ti.xcom_push(key="extra", value={"k": 1})
            return "pushed"

        @task
        def pull(ti=None):
            _expect(ti.xcom_pull(task_ids="push"), "pushed")
            _expect(ti.xcom_pull(task_ids="push", key="extra"), {"k": 1})

        pushed = push()
        pushed >> pull()

        def _templated(ds, x, ds_arg, expected):
            _expect((ds_arg, x), (ds, expected))

        PythonOperator(task_id="templated", python_callable=_templated,
                       op_kwargs={"x": "{{ params.x }}", "ds_arg": "{{ ds }}", "expected": str(expected_x)})

        @task
        def params_and_conf(params=None, dag_run=None, expected=None):
            _expect(params["x"], expected)
            _expect((dag_run.conf or {}).get("x", 3), expected)

        params_and_conf(expected=expected_x)

        bash = BashOperator(task_id="bash", bash_command="echo first; echo {{ ds }}")

        @task
        def check_bash(value, ds=None):
            _expect(value, ds)
            _expect(value, "2024-03-05")

        check_bash(bash.output)

        # Templates may pull XComs and use macros; a non-zero exit fails the task, 99 skips it (it ran: try 1).
        pulled = BashOperator(
            task_id="bash_pull",
            bash_command="test '{{ ti.xcom_pull(task_ids=\"push\") }}' = pushed"
                         " && test '{{ macros.ds_add(ds, 1) }}' = 2024-03-06 && test '{{ ds_nodash }}' = 20240305")
        pushed >> pulled
        BashOperator(task_id="bash_skip", bash_command="exit 99")

        @task.bash
        def bash_decorated(word):
            return f"echo {word}"

        @task(multiple_outputs=True)
        def split():
            return {"a": 1, "b": "two"}

        parts = split()

        @task
        def check_parts(a, b, decorated):
            _expect((a, b, decorated), (1, "two", "hello"))

        check_parts(parts["a"], parts["b"], bash_decorated("hello"))
