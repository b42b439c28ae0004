"""The run state comes from the leaves: a failed task followed by an all_done leaf that succeeds is a successful run."""

import datetime

from airflow.exceptions import AirflowFailException
from airflow.sdk import DAG, task

with DAG("run_state", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)):

    @task
    def bad():
        raise AirflowFailException("fails")

    @task(trigger_rule="all_done")
    def cleanup():
        return None

    bad() >> cleanup()
