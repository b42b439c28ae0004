"""The common-sql operators and the sqlite and postgres hooks, unchanged from Airflow's providers, on sqlite
(``sql_sqlite``) and on a real PostgreSQL (``sql_postgres``): one DAG per database, the same tasks.

``record_rows`` and ``through_hook`` write what they saw to ``$E2E_OUT/<name>.json`` for the test to read.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from airflow.providers.common.sql.operators.sql import (
    BranchSQLOperator,
    SQLCheckOperator,
    SQLExecuteQueryOperator,
    SQLIntervalCheckOperator,
    SQLThresholdCheckOperator,
    SQLValueCheckOperator,
)
from airflow.sdk import DAG, BaseHook, task

TODAY = "'{{ ds }}'"
YESTERDAY = "'{{ macros.ds_add(ds, -1) }}'"


def _record(name: str, value: object) -> None:
    Path(os.environ["E2E_OUT"], f"{name}.json").write_text(json.dumps(value))


def sql_dag(dag_id: str, conn_id: str) -> DAG:
    with DAG(dag_id, schedule=None, start_date=dt.datetime(2024, 1, 1),
             default_args={"conn_id": conn_id, "retries": 1, "retry_delay": dt.timedelta(seconds=1)}) as dag:
        create = SQLExecuteQueryOperator(task_id="create", sql=[
            "DROP TABLE IF EXISTS sales",
            "CREATE TABLE sales (ds VARCHAR(10), region VARCHAR(10), amount INTEGER)",
            f"INSERT INTO sales VALUES ({TODAY}, 'north', 10), ({TODAY}, 'south', 32), ({YESTERDAY}, 'north', 20)",
        ])
        select = SQLExecuteQueryOperator(
            task_id="select", sql=f"SELECT region, amount FROM sales WHERE ds = {TODAY} ORDER BY region")
        select_many = SQLExecuteQueryOperator(
            task_id="select_many", return_last=False,
            sql=[f"SELECT COUNT(*) FROM sales WHERE ds = {TODAY}", "SELECT MAX(amount) FROM sales"])

        @task
        def record_rows(rows, many):
            _record("select", {"rows": rows, "row_types": sorted({type(r).__name__ for r in rows}),
                               "many": many})

        check = SQLCheckOperator(task_id="check", sql=f"SELECT COUNT(*) FROM sales WHERE ds = {TODAY}")
        check_fails = SQLCheckOperator(task_id="check_fails",
                                       sql="SELECT COUNT(*) FROM sales WHERE region = 'nowhere'")
        value_check = SQLValueCheckOperator(task_id="value_check", pass_value=40, tolerance=0.1,
                                            sql=f"SELECT SUM(amount) FROM sales WHERE ds = {TODAY}")
        value_check_fails = SQLValueCheckOperator(task_id="value_check_fails", pass_value=100, retries=0,
                                                  sql=f"SELECT SUM(amount) FROM sales WHERE ds = {TODAY}")
        interval_check = SQLIntervalCheckOperator(task_id="interval_check", table="sales", days_back=1,
                                                  metrics_thresholds={"COUNT(*)": 2.5}, date_filter_column="ds")
        threshold_check = SQLThresholdCheckOperator(
            task_id="threshold_check", sql=f"SELECT MAX(amount) FROM sales WHERE ds = {TODAY}",
            min_threshold=1, max_threshold="SELECT 100")
        branch = BranchSQLOperator(task_id="branch", sql=f"SELECT COUNT(*) > 1 FROM sales WHERE ds = {TODAY}",
                                   follow_task_ids_if_true=["many_rows"], follow_task_ids_if_false=["few_rows"])

        @task
        def many_rows():
            return "many"

        @task
        def few_rows():
            return "few"

        @task
        def after_few():
            return "after few"

        @task(trigger_rule="none_failed_min_one_success")
        def joined():
            return "joined"

        @task
        def through_hook():
            hook = BaseHook.get_connection(conn_id).get_hook()
            hook.insert_rows("sales", [("2000-01-01", "east", 5), ("2000-01-01", "west", 7)],
                             target_fields=["ds", "region", "amount"])
            _record("through_hook", {"hook": type(hook).__name__,
                                     "records": hook.get_records(
                                         "SELECT region, amount FROM sales WHERE ds = '2000-01-01' ORDER BY region"),
                                     "first": hook.get_first("SELECT COUNT(*) FROM sales")})

        bad_sql = SQLExecuteQueryOperator(task_id="bad_sql", sql="SELECT * FROM no_such_table", retries=0)

        rows = record_rows(select.output, select_many.output)
        create >> [select, select_many, check, check_fails, value_check, value_check_fails, interval_check,
                   threshold_check, branch, bad_sql]
        few = few_rows()
        branch >> [many_rows(), few] >> joined()
        few >> after_few()
        rows >> through_hook()
    return dag


sql_dag("sql_sqlite", "sqlite_e2e")
sql_dag("sql_postgres", "postgres_e2e")
