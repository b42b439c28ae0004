"""The context of one try, as Airflow 3's ``RuntimeTaskInstance.get_template_context`` builds it.

``build_context`` gives the keys Airflow gives: those of the task (``ti``, ``task``, ``dag``, ``params``, ``macros``,
``var``, ``conn``, ...) always, and those of the run's logical date (``ds``, ``ts``, ``data_interval_*``,
``prev_data_interval_*_success``) only when the run has one, as in Airflow 3. The run itself is the stored
``DagRun`` record, which has the attributes Airflow's ``dag_run`` has (``conf``, ``run_id``, ``run_type``,
``logical_date``, ``data_interval_start``...).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from updraft.config import UpdraftConfig
from updraft.model.records import UNMAPPED, DagRun
from updraft.model.states import DagRunState
from updraft.runtime.cross_dag import CrossDag
from updraft.runtime.macros import macros
from updraft.runtime.templates import render_value
from updraft.runtime.xcom import XComClient
from updraft.sdk.context import Context
from updraft.sdk.exceptions import AirflowNotFoundException
from updraft.sdk.param import NOTSET, ParamsDict
from updraft.sdk.xcom_arg import XCOM_RETURN_KEY


class RuntimeTaskInstance:
    """``ti`` / ``task_instance``: the identity of the try, XCom access and the downstream skips it decided."""

    def __init__(self, *, task: Any, dag_id: str, run_id: str, map_index: int, try_number: int, max_tries: int,
                 xcom_client: XComClient, serialized_dag: Any = None, hostname: str | None = None,
                 start_date: Any = None, reschedule_count: int = 0, first_reschedule_date: Any = None) -> None:
        self.task = task
        self.task_id = task.task_id
        self.dag_id = dag_id
        self.run_id = run_id
        self.map_index = map_index
        self.try_number = try_number
        self.max_tries = max_tries
        self.xcom_client = xcom_client
        self._serialized_dag = serialized_dag
        self.hostname = hostname
        self.start_date = start_date
        self.state = "running"
        self.rendered_map_index: str | None = None
        self.skip_task_ids: set[str] = set()
        self.context: Context | None = None
        # Other DAGs' runs, for TriggerDagRunOperator and ExternalTaskSensor (set by the worker for each try).
        self.cross_dag: CrossDag | None = None
        self.task_reschedule_count = reschedule_count
        self._first_reschedule_date = first_reschedule_date

    @property
    def serialized_dag(self) -> Any:
        """The run's DAG version; given as a function, it is read when first asked for (a branch deciding its skips):
        a try's child gets it from the worker only then (``runtime.try_dag``)."""
        if callable(self._serialized_dag):
            self._serialized_dag = self._serialized_dag()
        return self._serialized_dag

    def get_first_reschedule_date(self, context: Mapping[str, Any]) -> datetime | None:
        """When this try's first reschedule-mode poke started (Airflow's first TaskReschedule start_date); None
        before the try was ever rescheduled. A reschedule-mode sensor's ``timeout`` counts from it."""
        if context.get("task_reschedule_count", 0) == 0:
            return None
        return self._first_reschedule_date  # type: ignore[no-any-return]

    def render_value(self, task: Any, value: Any, context: Mapping[str, Any]) -> Any:
        """``updraft.sdk.execution.TemplateRendering``: how an operator renders a value at run time."""
        return render_value(task, value, context)

    def get_template_context(self) -> Context:
        """The try's context (set once built), for code that asks the task instance for it."""
        if self.context is None:
            raise RuntimeError("the context of this try is not built yet")
        return self.context

    @property
    def log_url(self) -> str:
        """The try's page in the UI (Airflow's ``ti.log_url``, used by the alert email)."""
        from urllib.parse import quote

        base = (UpdraftConfig.from_env().base_url or "http://localhost:8080/").rstrip("/")
        mapped = f"/mapped/{self.map_index}" if self.map_index >= 0 else ""
        try_number = f"?try_number={self.try_number}" if self.try_number > 0 else ""
        return f"{base}/dags/{self.dag_id}/runs/{quote(self.run_id)}/tasks/{self.task_id}{mapped}{try_number}"

    @property
    def mark_success_url(self) -> str:
        return self.log_url

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.dag_id, self.run_id, self.task_id, self.map_index)

    def xcom_push(self, key: str, value: Any) -> None:
        self.xcom_client.push(key, value)

    def xcom_pull(self, task_ids: str | Sequence[str] | None = None, dag_id: str | None = None,
                  key: str = XCOM_RETURN_KEY, include_prior_dates: bool = False, *, map_indexes: Any = NOTSET,
                  default: Any = None, run_id: str | None = None) -> Any:
        return self.xcom_client.pull(task_ids, dag_id, key, include_prior_dates, map_indexes=map_indexes,
                                     default=default, run_id=run_id)

    # -- skips decided by branching and short-circuit operators (Airflow 3 sends SkipDownstreamTasks) --------
    def skip_all_except(self, followed: str | Sequence[str] | None) -> None:
        """A branch result: every direct downstream task not followed (nor reached from a followed one) skips."""
        # lazy: cold start (scheduling.decisions.skips only when a task branches)
        from updraft.scheduling.decisions import branch_skips

        self.skip_task_ids |= branch_skips(self.serialized_dag, self.task_id, followed)

    def skip_downstream(self, *, ignore_downstream_trigger_rules: bool) -> None:
        """A falsy short-circuit: all downstream tasks skip, or only direct ones (then trigger rules decide)."""
        # lazy: cold start (scheduling.decisions.skips only when a task short-circuits)
        from updraft.scheduling.decisions import short_circuit_skips

        self.skip_task_ids |= short_circuit_skips(
            self.serialized_dag, self.task_id, ignore_downstream_trigger_rules=ignore_downstream_trigger_rules)

    def __repr__(self) -> str:
        index = "" if self.map_index == UNMAPPED else f" map_index={self.map_index}"
        return f"<RuntimeTaskInstance {self.dag_id}.{self.task_id} {self.run_id}{index} try={self.try_number}>"


class VariableAccessor:
    """``{{ var.value.key }}`` / ``{{ var.json.key }}`` and ``var.value.get(key, default)``."""

    def __init__(self, *, deserialize_json: bool) -> None:
        self._json = deserialize_json

    def __getattr__(self, key: str) -> Any:
        if key.startswith("__"):
            raise AttributeError(key)
        # lazy: cold start (the SDK's Variable only when a template reads var)
        from updraft.sdk.variable import Variable

        return Variable.get(key, deserialize_json=self._json)

    def get(self, key: str, default: Any = NOTSET) -> Any:
        # lazy: cold start (the SDK's Variable only when a template reads var)
        from updraft.sdk.variable import Variable

        return Variable.get(key, default, deserialize_json=self._json)


class ConnectionAccessor:
    """``{{ conn.my_conn.host }}`` and ``conn.get(conn_id, default)``."""

    def __getattr__(self, conn_id: str) -> Any:
        if conn_id.startswith("__"):
            raise AttributeError(conn_id)
        # lazy: cold start (the SDK's Connection only when a template reads conn)
        from updraft.sdk.connection import Connection

        return Connection.get(conn_id)

    def get(self, conn_id: str, default_conn: Any = None) -> Any:
        # lazy: cold start (the SDK's Connection only when a template reads conn)
        from updraft.sdk.connection import Connection

        try:
            return Connection.get(conn_id)
        except AirflowNotFoundException:
            return default_conn


def process_params(dag: Any, task: Any, conf: Mapping[str, Any] | None) -> dict[str, Any]:
    """Airflow's ``process_params``: DAG params, the task's on top, the run's conf on top, then validated."""
    params = ParamsDict()
    params.update(getattr(dag, "params", None) or {})
    params.update(getattr(task, "params", None) or {})
    if conf:
        params.update(conf)  # [core] dag_run_conf_overrides_params defaults to True
    return params.validate()


PREVIOUS_RUN_REUSE_S = 10.0
# Per store (a test or a local system may hold several), then per (dag_id, logical date).
_previous: weakref.WeakKeyDictionary[Any, dict[tuple[str, Any], tuple[float, DagRun | None]]] = (
    weakref.WeakKeyDictionary())
_previous_lock = threading.Lock()


def previous_successful_run(store: Any, run: DagRun, *, page: int = 50) -> DagRun | None:
    """The latest successful run of the DAG with an earlier logical date (Airflow's previous dagrun success).

    Runs come newest first; the recent ones usually answer, so only the first ``page`` are read unless none of
    them does (then all are). A warm worker running task after task of one run asks once per
    ``PREVIOUS_RUN_REUSE_S``: an earlier run that succeeds in between shows a few seconds later.
    """
    if run.logical_date is None:
        return None
    through_worker = getattr(store, "previous_successful_run", None)  # a try's child: the worker's cache answers
    if through_worker is not None:
        found: DagRun | None = through_worker(run.dag_id, run.logical_date)
        return found
    return previous_successful_run_before(store, run.dag_id, run.logical_date, page=page)


def previous_successful_run_before(store: Any, dag_id: str, logical_date: datetime, *, page: int = 50
                                   ) -> DagRun | None:
    """``previous_successful_run`` for a run of ``dag_id`` at ``logical_date`` (cached per store)."""
    key = (dag_id, logical_date)
    with _previous_lock:
        cached = _previous.get(store, {}).get(key)
    if cached is not None and time.monotonic() - cached[0] < PREVIOUS_RUN_REUSE_S:
        return cached[1]
    found = _previous_successful_run(store, dag_id, logical_date, page=page)
    with _previous_lock:
        known = _previous.setdefault(store, {})
        if len(known) > 256:
            known.clear()
        known[key] = (time.monotonic(), found)
    return found


def _previous_successful_run(store: Any, dag_id: str, before: datetime, *, page: int) -> DagRun | None:

    def best(runs: list[DagRun]) -> DagRun | None:
        earlier = [(r.logical_date, r) for r in runs
                   if r.logical_date is not None and r.logical_date < before and r.state == DagRunState.SUCCESS]
        return max(earlier, key=lambda dated: dated[0])[1] if earlier else None

    recent = store.list_runs(dag_id, limit=page)
    found = best(recent)
    if found is not None or len(recent) < page:
        return found
    return best(store.list_runs(dag_id))


def build_context(*, ti: RuntimeTaskInstance, task: Any, dag: Any, run: DagRun, store: Any,
                  expanded_ti_count: int | None = None) -> Context:
    context = Context({
        "dag": dag,
        "task": task,
        "ti": ti,
        "task_instance": ti,
        "run_id": run.run_id,
        "dag_run": run,
        "params": process_params(dag, task, run.conf),
        "macros": macros(),
        "var": {"json": VariableAccessor(deserialize_json=True), "value": VariableAccessor(deserialize_json=False)},
        "conn": ConnectionAccessor(),
        "inlets": list(getattr(task, "inlets", []) or []),
        "outlets": list(getattr(task, "outlets", []) or []),
        "inlet_events": {},
        "outlet_events": {},
        "triggering_asset_events": {},
        "map_index_template": getattr(task, "map_index_template", None),
        "expanded_ti_count": expanded_ti_count,
        "task_instance_key_str": f"{dag.dag_id}__{task.task_id}__{run.run_id}",
        "task_reschedule_count": ti.task_reschedule_count,
        "try_number": ti.try_number,
        "partition_key": run.partition_key,  # Airflow 3.3's asset partitions: the run's, None when it has none
        "partition_date": run.partition_date,
    })
    ti.context = context
    # Computed now (one query) rather than lazily as in Airflow: values handed to user code and to Jinja must be
    # the real datetimes, and a proxy object would leak into XComs and f-strings.
    prev = previous_successful_run(store, run)
    context["prev_start_date_success"] = getattr(prev, "start_date", None)
    context["prev_end_date_success"] = getattr(prev, "end_date", None)
    logical_date = run.logical_date
    if logical_date is not None:
        ds = logical_date.strftime("%Y-%m-%d")
        ds_nodash = ds.replace("-", "")
        ts = logical_date.isoformat()
        context.update({
            "logical_date": logical_date,
            "ds": ds,
            "ds_nodash": ds_nodash,
            "task_instance_key_str": f"{dag.dag_id}__{task.task_id}__{ds_nodash}",
            "ts": ts,
            "ts_nodash": logical_date.strftime("%Y%m%dT%H%M%S"),
            "ts_nodash_with_tz": ts.replace("-", "").replace(":", ""),
            "data_interval_start": run.data_interval_start,
            "data_interval_end": run.data_interval_end,
            "prev_data_interval_start_success": getattr(prev, "data_interval_start", None),
            "prev_data_interval_end_success": getattr(prev, "data_interval_end", None),
        })
    return context
