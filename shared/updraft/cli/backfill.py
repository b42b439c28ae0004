"""``updraft backfill create|list|pause|unpause|cancel``: Airflow's ``airflow backfill create`` and the backfill
routes of its REST API, through the environment's API (the scheduler then creates the runs, as Airflow's does).
"""

from __future__ import annotations

import json
from typing import Any

import click

from updraft.cli.api_client import ApiCallFailed, ApiClient, api, path_of
from updraft.cli.options import BadValue, output_option, parse_date
from updraft.cli.output import render
from updraft.model.backfills import ReprocessBehavior

REPROCESS_BEHAVIORS = tuple(b.value for b in (ReprocessBehavior.NONE, ReprocessBehavior.COMPLETED,
                                              ReprocessBehavior.FAILED))


def backfill_row(backfill: dict[str, Any]) -> dict[str, Any]:
    state = ("completed" if backfill["completed_at"] else "paused" if backfill["is_paused"] else "running")
    return {"id": backfill["id"], "dag_id": backfill["dag_id"], "from_date": backfill["from_date"],
            "to_date": backfill["to_date"], "state": state, "max_active_runs": backfill["max_active_runs"],
            "reprocess_behavior": backfill["reprocess_behavior"], "created_at": backfill["created_at"],
            "completed_at": backfill["completed_at"]}


@click.group()
def backfill() -> None:
    """Run a DAG over a range of past dates (the scheduler creates the runs, at most --max-active-runs at once)."""


@backfill.command("create")
@click.option("--dag-id", required=True, help="The dag to backfill.")
@click.option("--from-date", required=True, help="Backfill window start (inclusive); naive dates are UTC.")
@click.option("--to-date", required=True, help="Backfill window end (inclusive).")
@click.option("--dag-run-conf", default=None, help="JSON dag run configuration.")
@click.option("--run-backwards", is_flag=True, help="Run the most recent logical date first.")
@click.option("--max-active-runs", type=click.IntRange(min=1), default=None,
              help="Max active runs for this backfill (default 10).")
@click.option("--reprocess-behavior", type=click.Choice(REPROCESS_BEHAVIORS), default=None,
              help="When a run exists for the logical date, whether a new run is created for it. Default none.")
@click.option("--dry-run", is_flag=True, help="Perform a dry run: print the runs it would create.")
@output_option
@click.pass_context
def create(ctx: click.Context, dag_id: str, from_date: str, to_date: str, dag_run_conf: str | None,
           run_backwards: bool, max_active_runs: int | None, reprocess_behavior: str | None, dry_run: bool,
           output: str) -> None:
    """Create a backfill of DAG_ID between --from-date and --to-date."""
    body: dict[str, Any] = {"dag_id": dag_id, "from_date": _date(from_date, "--from-date"),
                            "to_date": _date(to_date, "--to-date"), "run_backwards": run_backwards}
    if dag_run_conf:
        body["dag_run_conf"] = _conf(dag_run_conf)
    if max_active_runs is not None:
        body["max_active_runs"] = max_active_runs
    if reprocess_behavior is not None:
        body["reprocess_behavior"] = reprocess_behavior
    if dry_run:
        answer = api(ctx).post(path_of("backfills", "dry_run"), body)
        click.echo("Runs to be attempted:")
        click.echo(render([{"logical_date": b["logical_date"]} for b in answer["backfills"]], output))
        return
    click.echo(render([backfill_row(api(ctx).post(path_of("backfills"), body))], output))


@backfill.command("list")
@click.option("--dag-id", default=None, help="Only this DAG's backfills (default: every DAG's).")
@output_option
@click.pass_context
def list_backfills(ctx: click.Context, dag_id: str | None, output: str) -> None:
    """List backfills, oldest first."""
    client = api(ctx)
    dag_ids = [dag_id] if dag_id else [d["dag_id"] for d in client.pages(path_of("dags"), "dags")]
    rows = [backfill_row(b) for d in dag_ids for b in client.pages(path_of("backfills"), "backfills", dag_id=d)]
    click.echo(render(rows, output))


def _change(ctx: click.Context, backfill_id: int, action: str, output: str) -> None:
    client: ApiClient = api(ctx)
    try:
        answer = client.put(path_of("backfills", str(backfill_id), action), None)
    except ApiCallFailed as err:
        if err.status == 404:
            raise click.ClickException(f"Backfill {backfill_id} does not exist") from None
        raise
    click.echo(render([backfill_row(answer)], output))


@backfill.command("pause")
@click.argument("backfill_id", type=click.IntRange(min=0))
@output_option
@click.pass_context
def pause(ctx: click.Context, backfill_id: int, output: str) -> None:
    """Create no new runs for BACKFILL_ID (runs already going finish)."""
    _change(ctx, backfill_id, "pause", output)


@backfill.command("unpause")
@click.argument("backfill_id", type=click.IntRange(min=0))
@output_option
@click.pass_context
def unpause(ctx: click.Context, backfill_id: int, output: str) -> None:
    """Let BACKFILL_ID create runs again."""
    _change(ctx, backfill_id, "unpause", output)


@backfill.command("cancel")
@click.argument("backfill_id", type=click.IntRange(min=0))
@output_option
@click.pass_context
def cancel(ctx: click.Context, backfill_id: int, output: str) -> None:
    """Stop BACKFILL_ID: no new runs, its queued runs fail, running ones finish."""
    _change(ctx, backfill_id, "cancel", output)


def _date(value: str, what: str) -> str:
    parsed = parse_date(value, what)
    assert parsed is not None
    return parsed.isoformat()


def _conf(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise BadValue(f"Invalid JSON in --dag-run-conf: {err}") from None
    if not isinstance(value, dict):
        raise BadValue("--dag-run-conf must be a JSON object")
    return value
