"""Branching: ``@task.branch`` and ``BranchPythonOperator``, joins, a branch to a task group and after a group."""

import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.python import BranchPythonOperator
from airflow.sdk import DAG, TaskGroup, task

with DAG("branching", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)):

    @task
    def work():
        return None

    # 1. @task.branch picks one of two; the other is skipped by the branch, its own downstream by trigger rule.
    @task.branch
    def pick():
        return "left"

    left = work.override(task_id="left")()
    right = work.override(task_id="right")()
    after_right = work.override(task_id="after_right")()
    join_nfmos = work.override(task_id="join_nfmos", trigger_rule="none_failed_min_one_success")()
    join_all_success = work.override(task_id="join_all_success")()
    pick() >> [left, right]
    right >> after_right
    [left, right] >> join_nfmos
    [left, right] >> join_all_success

    # 2. BranchPythonOperator after a task group, returning a list that includes a task inside another group
    #    and a direct join; tasks of the group it did not name are skipped.
    with TaskGroup("prep") as prep:
        work.override(task_id="a")() >> work.override(task_id="b")()

    op_branch = BranchPythonOperator(task_id="op_branch", python_callable=lambda: ["grp.one", "op_join"])
    with TaskGroup("grp") as grp:
        one = work.override(task_id="one")()
        two = work.override(task_id="two")()
    three = EmptyOperator(task_id="three")
    op_join = EmptyOperator(task_id="op_join", trigger_rule="none_failed_min_one_success")
    prep >> op_branch >> [one, two, three, op_join]
    [one, two, three] >> op_join

    # 3. A branch returning a task group id follows the group's root tasks.
    @task.branch
    def to_group():
        return "tg"

    with TaskGroup("tg") as tg:
        root = work.override(task_id="root")()
        root >> work.override(task_id="leaf")()
    other = EmptyOperator(task_id="other")
    to_group() >> [tg, other]

    # 4. A branch returning None skips every direct downstream task; all_done still runs below them.
    @task.branch
    def none_branch():
        return None

    n1 = work.override(task_id="n1")()
    n2 = EmptyOperator(task_id="n2")
    n_done = work.override(task_id="n_done", trigger_rule="all_done")()
    none_branch() >> [n1, n2] >> n_done

    # 5. A branch inside a group may name a sibling relative to the group ("path_a" for "inner.path_a").
    with TaskGroup("inner"):
        @task.branch
        def choose():
            return "path_a"

        choose() >> [work.override(task_id="path_a")(), work.override(task_id="path_b")()]
