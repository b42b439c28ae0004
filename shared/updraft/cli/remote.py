"""Reads several commands make through the environment's API, and the CLI's shape of what they return.

The API writes Airflow's wire format (UTC datetimes with ``Z``, 404 sentences of its own); the CLI keeps
printing what it always has (ISO 8601 with ``+00:00``, Airflow CLI's "not found" lines), so scripts written
against either keep working.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import click

from updraft.cli.api_client import ApiCallFailed, ApiClient, path_of


def wire_date(text: str | None) -> str | None:
    """An API datetime as the CLI prints dates (``2024-01-01T00:00:00+00:00``)."""
    return dt.datetime.fromisoformat(text).isoformat() if text else None


def dag_not_found(dag_id: str) -> click.ClickException:
    return click.ClickException(f"Dag with dag_id: '{dag_id}' not found")


def get_dag(client: ApiClient, dag_id: str, *, details: bool = False) -> dict[str, Any]:
    """``DAGResponse`` (``DAGDetailsResponse`` with ``details``), or Airflow CLI's one-line "not found"."""
    try:
        found: dict[str, Any] = client.get(path_of("dags", dag_id, *(["details"] if details else [])))
    except ApiCallFailed as err:
        raise dag_not_found(dag_id) if err.status == 404 else err from None
    return found


def get_run(client: ApiClient, dag_id: str, run_id: str) -> dict[str, Any]:
    """``DAGRunResponse``; an unknown DAG or run is the CLI's one line naming which."""
    try:
        found: dict[str, Any] = client.get(path_of("dags", dag_id, "dagRuns", run_id))
    except ApiCallFailed as err:
        if err.status != 404:
            raise
        get_dag(client, dag_id)
        raise click.ClickException(f"DagRun with dag_id: '{dag_id}' and run_id: '{run_id}' not found") from None
    return found


def run_row(run: dict[str, Any]) -> dict[str, Any]:
    """A DAG run as Airflow's ``dags trigger`` prints it."""
    return {"conf": run["conf"], "dag_id": run["dag_id"], "dag_run_id": run["dag_run_id"],
            **{name: wire_date(run[name]) for name in ("data_interval_start", "data_interval_end", "end_date",
                                                        "logical_date", "run_after")},
            "run_type": run["run_type"], "start_date": wire_date(run["start_date"]), "state": run["state"]}


def task_instances(client: ApiClient, dag_id: str, run_id: str) -> list[dict[str, Any]]:
    """Every task instance of a run (untouched tasks included, state None), as the API lists them."""
    get_run(client, dag_id, run_id)
    return list(client.pages(path_of("dags", dag_id, "dagRuns", run_id, "taskInstances"), "task_instances"))
