"""Pools, priorities and placement: a 2-slot pool shared by loads, and one heavy task on Fargate."""

from datetime import timedelta

import pendulum
from shared_helpers import TABLES

from airflow.sdk import dag, task


@dag(
    schedule=timedelta(hours=6),
    start_date=pendulum.datetime(2024, 1, 1, tz="Europe/Berlin"),
    catchup=False,
    max_active_runs=1,
    max_active_tasks=4,
    tags=["example", "pools"],
)
def example_pools_and_compute():
    @task(pool="warehouse", weight_rule="absolute")
    def load(table: str) -> str:
        return table

    loads = [load.override(task_id=f"load_{t}", priority_weight=w)(t) for t, w in TABLES.items()]

    @task(executor="fargate", executor_config={"cpu": 1024, "memory": 4096},
          execution_timeout=timedelta(hours=2))
    def rebuild_aggregates() -> None:
        print("long-running work runs on Fargate, beyond Lambda's 15 minutes")

    loads >> rebuild_aggregates()


example_pools_and_compute()
