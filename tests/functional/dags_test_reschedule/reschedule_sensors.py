"""Reschedule-mode sensors for `dags test`: each waits ten minutes between pokes, which the test skips."""

import datetime

from airflow.providers.standard.operators.python import PythonOperator
from airflow.providers.standard.sensors.bash import BashSensor
from airflow.providers.standard.sensors.filesystem import FileSensor
from airflow.providers.standard.sensors.python import PythonSensor
from airflow.sdk import DAG, task

with DAG("reschedule_sensors", schedule=None, start_date=datetime.datetime(2024, 1, 1)):
    third = PythonSensor(task_id="third_poke", mode="reschedule", poke_interval=600,
                         python_callable=lambda task_reschedule_count: task_reschedule_count >= 2)
    PythonOperator(task_id="after", python_callable=lambda: "done").set_upstream(third)

    # A recursive glob below the fs_default connection's path (the test sets it).
    FileSensor(task_id="found", mode="reschedule", poke_interval=600, filepath="**/*.csv", recursive=True)
    FileSensor(task_id="missing", mode="reschedule", poke_interval=600, timeout=900, soft_fail=True,
               filepath="*.parquet")
    BashSensor(task_id="bash_times_out", mode="reschedule", poke_interval=600, timeout=900, retries=2,
               bash_command="exit 1")
    BashSensor(task_id="bash_fails", mode="reschedule", poke_interval=600, bash_command="exit 3",
               retry_exit_code=1)

    @task.sensor(mode="reschedule", poke_interval=600)
    def decorated(task_reschedule_count=None):
        from airflow.sdk.bases.sensor import PokeReturnValue

        return PokeReturnValue(is_done=task_reschedule_count == 1, xcom_value="second poke")

    decorated()
