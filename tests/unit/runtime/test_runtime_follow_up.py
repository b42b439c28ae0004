"""Who schedules a run after a try: the worker itself when a downstream task waits on this one alone."""

from __future__ import annotations

from datetime import datetime

from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, task
from updraft.scheduling.try_lifecycle import has_sole_successor
from updraft.serialization import deserialize_dag, serialize_dag


def _serialized(dag: DAG) -> DAG:
    return deserialize_dag(serialize_dag(dag, relative_fileloc="d.py", file_hash="h"))


def test_chains_fan_outs_and_mapping_stay_in_the_worker_fan_ins_and_leaves_do_not():
    with DAG("d", start_date=datetime(2024, 1, 1)) as dag:
        start, end = EmptyOperator(task_id="start"), EmptyOperator(task_id="end")
        mids = [EmptyOperator(task_id=f"m{i}") for i in range(3)]
        start >> mids >> end

        @task
        def numbers():
            return [1, 2]

        @task
        def show(x):
            return x

        show.expand(x=numbers())
    for candidate in (dag, _serialized(dag)):
        assert has_sole_successor(candidate, "start")  # each mid waits on start alone
        assert not has_sole_successor(candidate, "m0")  # end waits on all three
        assert not has_sole_successor(candidate, "end")  # a leaf: the run's end is the scheduler's to see
        assert has_sole_successor(candidate, "numbers")  # the mapped task expands from it alone
