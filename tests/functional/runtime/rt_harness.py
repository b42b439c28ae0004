"""Real runs through the scheduler and the task runtime: DAG files in a temporary folder, the store on moto."""

from __future__ import annotations

import datetime as dt
import textwrap
from pathlib import Path

from tests.functional.scheduling.harness import Clock, make_store, scheduler_for, store_dags
from updraft.model.records import TIKey
from updraft.model.states import FINISHED_RUN_STATES
from updraft.runtime.loader import LocalDagLoader
from updraft.runtime.logs import LocalLogSink
from updraft.runtime.worker import handle_dispatch
from updraft.scheduling.commands.dag_registration import register_parsed_file, set_paused
from updraft.scheduling.commands.triggering import trigger_dag

HEADER = """\
import datetime
from airflow.sdk import DAG, Param, dag, task, get_current_context
from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.python import (
    BranchPythonOperator, PythonOperator, ShortCircuitOperator)
from airflow.exceptions import AirflowFailException, AirflowSkipException
START = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
"""


class RuntimeEnv:
    def __init__(self, root: Path, plugins_folder: Path | None = None) -> None:
        self.dags_folder = root / "dags"
        self.dags_folder.mkdir()
        self.logs = LocalLogSink(root / "logs")
        self.store = make_store()
        self.clock = Clock()
        self.scheduler, self.executor = scheduler_for(self.store, self.clock)
        self.loader = LocalDagLoader(self.dags_folder, plugins_folder)

    def add(self, dag_id: str, body: str, *, extra_files: dict[str, str] | None = None) -> None:
        """Write ``<dag_id>.py`` (HEADER + body) and store its DAGs as the parser would."""
        for name, text in (extra_files or {}).items():
            path = self.dags_folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (self.dags_folder / f"{dag_id}.py").write_text(HEADER + textwrap.dedent(body))
        dags = self.loader.load_file(f"{dag_id}.py")
        store_dags(self.store, dags[dag_id], now=self.clock())

    def add_folder(self, folder: Path) -> list[str]:
        """Copy a DAGs folder in and store every DAG of every file (as the parser would); returns the dag_ids."""
        import shutil

        from updraft.model.parse_results import ParsedFile
        from updraft.serialization import serialize_dag

        shutil.copytree(folder, self.dags_folder, dirs_exist_ok=True)
        dag_ids = []
        for path in sorted(self.dags_folder.glob("*.py")):
            dags = self.loader.load_file(path.name)
            docs = [serialize_dag(d, relative_fileloc=path.name, file_hash="h") for d in dags.values()]
            if not docs:
                continue
            register_parsed_file(self.store, ParsedFile(relative_path=path.name, file_hash="h", dags=docs),
                                        now=self.clock())
            for dag_id in dags:
                set_paused(self.store, dag_id, False)
                dag_ids.append(dag_id)
        return dag_ids

    def trigger(self, dag_id: str, **kwargs):
        return trigger_dag(self.store, dag_id, now=self.clock(), **kwargs)

    def drain(self) -> int:
        ran = 0
        while items := self.executor.take():
            for item in items:
                result = handle_dispatch(item, store=self.store, loader=self.loader, scheduler=self.scheduler,
                                         now_fn=self.clock, log_sink=self.logs)
                ran += result is not None
        return ran

    def run(self, dag_id: str, *, max_ticks: int = 30, tick: dt.timedelta | None = None, **trigger_kwargs):
        run = self.trigger(dag_id, **trigger_kwargs)
        for _ in range(max_ticks):
            self.scheduler.run_pass()
            self.drain()
            run = self.store.get_run(dag_id, run.run_id)
            if run.state in FINISHED_RUN_STATES:
                return run
            if tick:
                self.clock.advance(seconds=tick.total_seconds())
        raise AssertionError(f"run did not finish: {self.states(dag_id, run.run_id)}")

    def states(self, dag_id: str, run_id: str) -> dict[str, str | None]:
        return {ti.key.label: ti.state and ti.state.value for ti in self.store.get_run_tis(dag_id, run_id)}

    def xcom(self, dag_id: str, run_id: str, task_id: str, key: str = "return_value", map_index: int = -1):
        return self.store.get_xcom(TIKey(dag_id, run_id, task_id, map_index), key)

    def ti(self, dag_id: str, run_id: str, task_id: str, map_index: int = -1):
        return self.store.get_ti(TIKey(dag_id, run_id, task_id, map_index))

    def log(self, dag_id: str, run_id: str, task_id: str, try_number: int = 1, map_index: int = -1) -> str | None:
        return self.logs.read(TIKey(dag_id, run_id, task_id, map_index), try_number)
