"""Manual runs: what ``airflow dags trigger`` and the REST API's POST dagRuns create."""

from __future__ import annotations

import datetime as dt
from typing import Any

from updraft.model.identifiers import run_id_problem
from updraft.model.records import DagRun
from updraft.model.states import DagRunState, DagRunType
from updraft.scheduling.dag_versions import pinned_dag
from updraft.scheduling.run_creation import manual_run_info
from updraft.sdk.exceptions import AirflowBadRequest, DagNotFound, DagRunAlreadyExists, ParamValidationError
from updraft.sdk.param import NOTSET
from updraft.serialization.model import SerializedDAG
from updraft.store.api import Store

__all__ = ["DagRunAlreadyExists", "InvalidRunId", "trigger_dag"]


class InvalidRunId(AirflowBadRequest):
    """The run id is not one Airflow accepts (``updraft.model.identifiers``); nothing was created."""

    status_code = 400


def trigger_dag(store: Store, dag_id: str, *, now: dt.datetime, conf: dict[str, Any] | None = None,
                logical_date: dt.datetime | None = None, run_id: str | None = None,
                run_type: DagRunType = DagRunType.MANUAL, partition_key: str | None = None,
                triggered_by: str | None = None, triggering_user_name: str | None = None) -> DagRun:
    """Create a queued manual run pinned to the DAG's current version; conf is validated against its params.

    The run's data interval is the timetable's ``infer_manual_data_interval(run_after=now)``; its logical date is
    the one given, else the trigger time (``run_after``), so templates such as ``ds`` have a value; its id, when
    not given, is ``manual__<logical date>`` whatever ``run_type`` (a TriggerDagRunOperator's runs are
    ``operator_triggered`` with a ``manual__`` id, as Airflow names them). A run id Airflow would refuse (``..``,
    ``/``, a newline, over 250 characters) raises :class:`InvalidRunId`. ``partition_key`` is the partition the
    run is for (Airflow 3.3's trigger field; a ``PartitionedAtRuntime`` DAG's runs get theirs this way).
    ``triggered_by`` and ``triggering_user_name``: where the trigger came from and who sent it, kept on the run.
    """
    if run_id is not None and (problem := run_id_problem(run_id)) is not None:
        raise InvalidRunId(problem)
    meta = store.get_dag_meta(dag_id)
    if meta is None or not meta.is_active:
        raise DagNotFound(f"Dag with dag_id: '{dag_id}' not found")
    dag = pinned_dag(store, dag_id, meta.dag_hash)
    conf = dict(conf or {})
    _validate_conf(dag, conf)
    info = manual_run_info(dag, run_after=now, logical_date=logical_date, horizon=meta.timetable_horizon)
    logical = logical_date or now
    run_id = run_id or f"{DagRunType.MANUAL.value}__{logical.isoformat()}"
    run = DagRun(dag_id=dag_id, run_id=run_id, run_type=run_type.value, dag_hash=meta.dag_hash,
                 state=DagRunState.QUEUED, logical_date=logical, data_interval_start=info.data_interval.start,
                 data_interval_end=info.data_interval.end, run_after=now, conf=conf, queued_at=now,
                 partition_key=partition_key, triggered_by=triggered_by, triggering_user_name=triggering_user_name)
    if not store.create_run(run):
        raise DagRunAlreadyExists(f"A DAG run with run_id '{run_id}' already exists for DAG '{dag_id}'")
    return run


def _validate_conf(dag: SerializedDAG, conf: dict[str, Any]) -> None:
    """Each param resolves from conf or its default and must pass its schema, as Airflow checks on trigger."""
    for name, param in dag.params.items():
        try:
            param.resolve(conf.get(name, NOTSET))
        except ParamValidationError as err:
            raise ParamValidationError(f"Invalid input for param {name}: {err}") from None
