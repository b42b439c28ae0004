"""``updraft runs list DAG_ID`` (also ``updraft dags list-runs DAG_ID``, Airflow's spelling)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from updraft.cli.options import iso, output_option
from updraft.cli.output import render
from updraft.cli.system import require_dag, system

if TYPE_CHECKING:
    from updraft.model.records import DagRun

RUN_STATES = ("queued", "running", "success", "failed")


def list_row(run: DagRun) -> dict[str, Any]:
    """Airflow's ``dags list-runs`` columns."""
    return {"dag_id": run.dag_id, "run_id": run.run_id, "state": run.state.value, "run_type": run.run_type,
            "logical_date": iso(run.logical_date), "start_date": iso(run.start_date), "end_date": iso(run.end_date)}


@click.group()
def runs() -> None:
    """DAG runs of the running system."""


@runs.command("list")
@click.argument("dag_id")
@click.option("--state", type=click.Choice(RUN_STATES), default=None, help="Only runs in this state.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many (newest first).")
@output_option
@click.pass_context
def list_runs(ctx: click.Context, dag_id: str, state: str | None, limit: int | None, output: str) -> None:
    """List DAG_ID's runs, newest logical date first."""
    store = system(ctx).store
    require_dag(store, dag_id)
    found = store.list_runs(dag_id, limit=None if state else limit)
    if state:
        found = [run for run in found if run.state.value == state][:limit]
    click.echo(render([list_row(run) for run in found], output))
