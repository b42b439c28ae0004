"""Task retry policies under `updraft dags test`: a rule that fails at once, one that retries after its own delay
(the task's retry_delay is an hour, so only the policy's zero delay lets the run finish), and the default."""

import datetime as dt

from airflow.sdk import DAG, ExceptionRetryPolicy, RetryAction, RetryRule, get_current_context, task

POLICY = ExceptionRetryPolicy(rules=[
    RetryRule(exception=PermissionError, action=RetryAction.FAIL, reason="not retryable"),
    RetryRule(exception="builtins.ConnectionError", action=RetryAction.RETRY, retry_delay=dt.timedelta(0)),
])

with DAG("retry_policies", schedule=None, start_date=dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
         default_args={"retries": 3, "retry_delay": dt.timedelta(hours=1), "retry_policy": POLICY}):
    @task
    def forbidden():
        raise PermissionError("no access")

    @task
    def flaky():
        if get_current_context()["ti"].try_number < 3:
            raise ConnectionError("try again")
        return "ok"

    @task(retries=0)
    def no_retries_left():
        raise ConnectionError("RETRY stays within retries")

    forbidden()
    flaky()
    no_retries_left()
