"""``updraft runs list DAG_ID`` (also ``updraft dags list-runs DAG_ID``, Airflow's spelling)."""

from __future__ import annotations

import itertools
from typing import Any

import click

from updraft.cli.api_client import ApiCallFailed, api, path_of
from updraft.cli.options import output_option
from updraft.cli.output import render
from updraft.cli.remote import dag_not_found, wire_date

RUN_STATES = ("queued", "running", "success", "failed")


def list_row(run: dict[str, Any]) -> dict[str, Any]:
    """Airflow's ``dags list-runs`` columns."""
    return {"dag_id": run["dag_id"], "run_id": run["dag_run_id"], "state": run["state"],
            "run_type": run["run_type"], "logical_date": wire_date(run["logical_date"]),
            "start_date": wire_date(run["start_date"]), "end_date": wire_date(run["end_date"])}


@click.group()
def runs() -> None:
    """DAG runs of the environment."""


@runs.command("list")
@click.argument("dag_id")
@click.option("--state", type=click.Choice(RUN_STATES), default=None, help="Only runs in this state.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many (newest first).")
@output_option
@click.pass_context
def list_runs(ctx: click.Context, dag_id: str, state: str | None, limit: int | None, output: str) -> None:
    """List DAG_ID's runs, newest logical date first."""
    found = api(ctx).pages(path_of("dags", dag_id, "dagRuns"), "dag_runs", state=state,
                           order_by="-logical_date")
    try:
        rows = [list_row(run) for run in itertools.islice(found, limit)]
    except ApiCallFailed as err:
        raise dag_not_found(dag_id) if err.status == 404 else err from None
    click.echo(render(rows, output))
