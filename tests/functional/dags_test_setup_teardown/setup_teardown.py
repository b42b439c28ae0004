"""Setup/teardown DAGs for `updraft dags test`: a failing work task, a failing teardown with and without
on_failure_fail_dagrun, and a failing setup."""

import datetime as dt

from airflow.sdk import DAG, setup, task, teardown

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


@setup
def create():
    return "cluster-1"


@task
def work(cluster, fail=False):
    if fail:
        raise ValueError("the work failed")
    return cluster


@teardown
def delete(cluster, fail=False):
    if fail:
        raise ValueError("the clean-up failed")


def build(dag_id, *, work_fails=False, teardown_fails=False, fail_dagrun=False, setup_fails=False):
    with DAG(dag_id, schedule=None, start_date=START) as dag:
        made = create.override(task_id="create")() if not setup_fails else work.override(task_id="create")(
            "x", fail=True).as_setup()
        done = work(made, fail=work_fails)
        done >> delete.override(on_failure_fail_dagrun=fail_dagrun)(made, fail=teardown_fails)
        done >> work.override(task_id="report")(done)
    return dag


build("work_fails", work_fails=True)
build("teardown_fails", teardown_fails=True)
build("teardown_fails_dagrun", teardown_fails=True, fail_dagrun=True)
build("setup_fails", setup_fails=True)
