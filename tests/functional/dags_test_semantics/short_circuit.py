"""``@task.short_circuit`` with ``ignore_downstream_trigger_rules`` True (the default) and False."""

import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, task

with DAG("short_circuit", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)):

    @task
    def work():
        return None

    # True (default): every task downstream, at any depth and whatever its trigger rule, is skipped.
    @task.short_circuit
    def stop_all():
        return False

    all_direct = work.override(task_id="all_direct")()
    all_deep = work.override(task_id="all_deep")()
    all_done_deep = work.override(task_id="all_done_deep", trigger_rule="all_done")()
    stop_all() >> all_direct >> all_deep >> all_done_deep

    # False: only the direct downstream tasks are skipped; the rest follow their trigger rules.
    @task.short_circuit(ignore_downstream_trigger_rules=False)
    def stop_direct():
        return 0

    direct = work.override(task_id="direct")()
    deep_all_success = work.override(task_id="deep_all_success")()
    deep_all_done = work.override(task_id="deep_all_done", trigger_rule="all_done")()
    deep_none_failed = EmptyOperator(task_id="deep_none_failed", trigger_rule="none_failed")
    stop_direct() >> direct >> [deep_all_success, deep_all_done, deep_none_failed]

    # A truthy result lets everything run.
    @task.short_circuit
    def go_on():
        return "yes"

    go_on() >> work.override(task_id="went_on")()
