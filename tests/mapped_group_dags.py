"""The mapped task group the scheduler and the API tests share: ``group``, holding the one task ``one``, expanded
over a list (and, if asked, ``one`` also mapped on its own, outside the group)."""

from __future__ import annotations

import datetime as dt

from airflow.sdk import DAG, task, task_group


def one_task_group(dag_id: str, xs: list, *, start_date: dt.datetime, one_mapped_over: list | None = None) -> DAG:
    with DAG(dag_id, schedule=None, start_date=start_date) as dag:
        @task
        def one(x):
            return x

        @task_group
        def group(x):
            one(x)

        group.expand(x=xs)
        if one_mapped_over is not None:
            one.expand(x=one_mapped_over)
    return dag
