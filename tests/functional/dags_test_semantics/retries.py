"""Retries: a retry that succeeds, retries exhausted, and AirflowFailException bypassing retries."""

import datetime

from airflow.exceptions import AirflowFailException
from airflow.sdk import DAG, task

with DAG("retries", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
         default_args={"retry_delay": datetime.timedelta(seconds=0)}):

    @task(retries=2)
    def flaky(ti=None):
        if ti.try_number == 1:
            raise ValueError("first try fails")
        return ti.try_number

    @task
    def check_flaky(value):
        if value != 2:
            raise AirflowFailException(f"flaky returned {value}")

    check_flaky(flaky())

    @task(retries=2)
    def always_fails():
        raise ValueError("every try fails")

    @task
    def after_exhausted():
        return None

    always_fails() >> after_exhausted()

    @task(retries=3)
    def fail_fast():
        raise AirflowFailException("no retry for this")

    fail_fast()

    @task(retries=1, retry_delay=datetime.timedelta(seconds=0))
    def mapped_flaky(x, ti=None):
        if ti.try_number == 1 and x == 2:
            raise ValueError("first try of index 1 fails")
        return x

    mapped_flaky.expand(x=[1, 2])
