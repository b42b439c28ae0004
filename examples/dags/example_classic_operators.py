"""Classic operators: Bash and Python operators, a branch, a task group, edge labels and default_args."""

from datetime import datetime, timedelta

from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.empty import EmptyOperator
from airflow.operators.python import BranchPythonOperator, PythonOperator
from airflow.utils.edgemodifier import Label
from airflow.utils.task_group import TaskGroup
from airflow.utils.trigger_rule import TriggerRule


def choose(**context):
    return "weekday" if context["logical_date"].weekday() < 5 else "weekend"


def report(ds, **_):
    print(f"report for {ds}")


with DAG(
    dag_id="example_classic_operators",
    schedule="0 6 * * *",
    start_date=datetime(2024, 1, 1),
    catchup=False,
    default_args={"owner": "data-eng", "retries": 1, "retry_delay": timedelta(minutes=1)},
    dagrun_timeout=timedelta(hours=1),
    tags=["example"],
    doc_md="Runs every morning at 06:00 UTC and branches on the day of the week.",
):
    start = EmptyOperator(task_id="start")
    branch = BranchPythonOperator(task_id="branch", python_callable=choose)
    weekday = BashOperator(task_id="weekday", bash_command="echo 'weekday run {{ ds }}'")
    weekend = BashOperator(task_id="weekend", bash_command="echo 'weekend run {{ ds }}'")
    join = EmptyOperator(task_id="join", trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS)

    with TaskGroup("reports", tooltip="Daily reports") as reports:
        for name in ("sales", "stock"):
            PythonOperator(task_id=name, python_callable=report)

    start >> branch
    branch >> Label("Mon-Fri") >> weekday >> join
    branch >> Label("Sat-Sun") >> weekend >> join
    join >> reports
