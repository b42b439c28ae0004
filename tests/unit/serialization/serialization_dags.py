"""A DAG that uses every authoring feature the serialized form must carry (a uniquely named helper module).

``build_everything_dag`` is also run in fresh interpreters (with different hash seeds) by the determinism
tests, so it must only depend on this file and the installed packages.
"""

from __future__ import annotations

import datetime as dt
import functools
from pathlib import Path
from typing import Any

import pendulum

from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.python import BranchPythonOperator, PythonOperator
from airflow.sdk import DAG, Label, Param, TaskGroup, chain, task, task_group

PLUGINS_FOLDER = Path(__file__).resolve().parents[3] / "examples" / "plugins"


class Opaque:
    """An object with no JSON form whose default repr carries a memory address."""


def on_failure(context: Any) -> None:
    pass


def load_workday_timetable() -> Any:
    """The seeds' how-to plugin, registered through the plugins folder as the parser does."""
    from updraft.plugins import load_plugins_folder

    load_plugins_folder(PLUGINS_FOLDER)
    import workday

    return workday.AfterWorkdayTimetable()


def build_everything_dag(dag_id: str = "everything", *, schedule: Any = "0 3 * * 1-5") -> DAG:
    default_args = {
        "owner": "data",
        "retries": 2,
        "retry_delay": dt.timedelta(minutes=5),
        "max_retry_delay": dt.timedelta(hours=1),
        "retry_exponential_backoff": 2.0,
        "execution_timeout": dt.timedelta(minutes=10),
        "on_failure_callback": on_failure,
        "on_retry_callback": lambda context: None,
        "end_date": dt.datetime(2030, 1, 1),
        "params": {"from_default_args": "yes"},
    }
    with DAG(
        dag_id,
        schedule=schedule,
        start_date=pendulum.datetime(2024, 1, 1, tz="Europe/Berlin"),
        catchup=False,
        default_args=default_args,
        max_active_runs=2,
        max_active_tasks=8,
        dagrun_timeout=dt.timedelta(hours=6),
        tags={"z-tag", "a-tag", "m-tag"},
        doc_md="# Everything\nEvery authoring feature at once.",
        description="round trip fixture",
        params={
            "limit": Param(10, type="integer", minimum=1, description="rows"),
            "mode": Param("fast", enum=["fast", "slow"]),
            "plain": [1, 2, 3],
        },
        owner_links={"data": "https://example.com/data"},
        on_failure_callback=on_failure,
    ) as the_dag:
        @task
        def extract() -> list[int]:
            """Reads the rows."""
            return [1, 2, 3]

        @task(multiple_outputs=True)
        def stats(rows) -> dict[str, int]:
            return {"n": len(rows)}

        @task(pool="db", pool_slots=2, priority_weight=5)
        def load(row: int, factor: int = 1, ti=None) -> int:
            return row * factor

        @task.branch
        def choose() -> str:
            return "grp.fast"

        @task.short_circuit(ignore_downstream_trigger_rules=False)
        def gate() -> bool:
            return True

        @task.bash
        def shell(name: str) -> str:
            return f"echo {name}"

        @task.sensor(poke_interval=30, timeout=300, mode="reschedule")
        def wait_for_file() -> bool:
            return True

        @task_group
        def per_region(region: str):
            @task
            def fetch(region: str) -> str:
                return region

            return fetch(region)

        rows = extract()
        summary = stats(rows)
        loaded = load.partial(factor=3).expand(row=rows)
        doubled = load.expand(row=rows.map(lambda v: v * 2))
        paired = load.expand(row=rows.zip(extract()))
        padded = load.expand(row=rows.zip(extract(), fillvalue=None))
        joined = load.expand(row=rows.concat(extract()))
        per_kwargs = load.expand_kwargs([{"row": 1}, {"row": 2, "factor": 4}])

        with TaskGroup("grp", tooltip="the group", default_args={"queue": "grp-queue"}) as grp:
            fast = EmptyOperator(task_id="fast")
            slow = BashOperator(
                task_id="slow",
                bash_command="run.sh {{ ds }}",
                env={"B": "2", "A": "1"},
                executor="fargate",
                executor_config={"cpu": 1024, "memory": 4096},
                execution_timeout=dt.timedelta(hours=2),
                trigger_rule="none_failed_min_one_success",
                weight_rule="upstream",
                wait_for_downstream=True,
            )
            with TaskGroup("inner", prefix_group_id=False):
                deep = PythonOperator(
                    task_id="deep",
                    python_callable=functools.partial(on_failure, None),
                    op_kwargs={
                        "obj": Opaque(),
                        "a_set": {"c", "a", "b"},
                        "int_keys": {2: "two", 1: "one"},
                        "when": dt.datetime(2024, 5, 1, 12, 0),
                        "aware": pendulum.datetime(2024, 5, 1, tz="Asia/Tokyo"),
                        "day": dt.date(2024, 5, 1),
                        "span": dt.timedelta(seconds=90),
                        "tuple": (1, "x"),
                        "summary_n": summary["n"],
                        "fn": lambda: None,
                    },
                    weight_rule="absolute",
                    priority_weight=50,
                    params={"task_level": Param(1, type="integer")},
                )
            fast >> slow >> deep

        branch = BranchPythonOperator(task_id="pick", python_callable=on_failure)
        mapped_bash = BashOperator.partial(task_id="mapped_bash", retries=1).expand(
            bash_command=["echo a", "echo b"], env=[{"X": "1"}])
        from_xcom = BashOperator.partial(task_id="kwargs_from_xcom").expand_kwargs(extract())
        end = EmptyOperator(task_id="end", trigger_rule="all_done")

        rows >> Label("to branch") >> choose() >> [grp, branch]
        chain(gate(), shell("x"), wait_for_file())
        regional = per_region("eu")
        [loaded, doubled, paired, padded, joined, per_kwargs, mapped_bash, from_xcom, regional] >> end
        branch >> Label("done") >> end
        deep >> end
    return the_dag
