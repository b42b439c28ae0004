"""A DAG on a custom timetable registered by a plugin (see examples/plugins/workday.py)."""

import pendulum
from workday import AfterWorkdayTimetable

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG

with DAG(
    dag_id="example_workday_timetable",
    schedule=AfterWorkdayTimetable(),
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    tags=["example", "timetable"],
):
    EmptyOperator(task_id="after_workday")
