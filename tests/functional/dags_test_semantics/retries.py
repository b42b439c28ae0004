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

    # execution_timeout is an ordinary failure: retried, then failed on the last try.
    @task(retries=1, execution_timeout=datetime.timedelta(seconds=1))
    def too_slow():
        import time

        # Short sleeps: in `dags test` tasks run in threads, where the timeout is delivered between Python
        # bytecodes, so one long C-level sleep would only be interrupted when it returns (Airflow's SIGALRM
        # interrupts it at once). The outcome is the same either way.
        while True:
            time.sleep(0.1)

    too_slow()

    # AirflowSkipException ends the task as skipped on its first try, retries or not.
    @task(retries=2)
    def skips():
        from airflow.exceptions import AirflowSkipException

        raise AirflowSkipException("nothing to do")

    skips()
