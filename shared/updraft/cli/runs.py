"""``updraft runs list DAG_ID`` (also ``updraft dags list-runs DAG_ID``, Airflow's spelling) and ``updraft runs cost
DAG_ID RUN_ID``.

``runs list`` adds a ``cost_usd`` column to Airflow's (each run's cost: ``updraft.cost``, from one request for the
page of runs); ``dags list-runs`` keeps Airflow's columns exactly, for scripts written against Airflow's CLI.
"""

from __future__ import annotations

import itertools
from typing import Any

import click

from updraft.cli.api_client import ApiCallFailed, ApiClient, api, path_of, updraft_path_of
from updraft.cli.options import output_option
from updraft.cli.output import render
from updraft.cli.remote import dag_not_found, wire_date
from updraft.model.states import DagRunState

COSTS_PER_REQUEST = 100  # the cost route's limit on run ids per request


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
@click.option("--state", type=click.Choice([s.value for s in DagRunState]), default=None,
              help="Only runs in this state.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many (newest first).")
@output_option
@click.pass_context
def list_runs(ctx: click.Context, dag_id: str, state: str | None, limit: int | None, output: str) -> None:
    """List DAG_ID's runs, newest logical date first (``runs list``: with each run's cost in dollars)."""
    client = api(ctx)
    found = client.pages(path_of("dags", dag_id, "dagRuns"), "dag_runs", state=state, order_by="-logical_date")
    try:
        rows = [list_row(run) for run in itertools.islice(found, limit)]
    except ApiCallFailed as err:
        raise dag_not_found(dag_id) if err.status == 404 else err from None
    if ctx.info_name == "list":  # not Airflow's `dags list-runs`
        costs = run_costs(client, dag_id, [row["run_id"] for row in rows])
        for row in rows:
            row["cost_usd"] = costs.get(row["run_id"])
    click.echo(render(rows, output))


def run_costs(client: ApiClient, dag_id: str, run_ids: list[str]) -> dict[str, float]:
    """Each run's cost in dollars (rounded to a millionth), a page of run ids per request; none from an
    environment whose API has no cost route (an older release): the column is then empty."""
    out: dict[str, float] = {}
    for start in range(0, len(run_ids), COSTS_PER_REQUEST):
        try:
            answer = client.get(updraft_path_of("dags", dag_id, "runCosts"),
                                dag_run_id=run_ids[start:start + COSTS_PER_REQUEST])
        except ApiCallFailed as err:
            if err.status == 404:
                return out
            raise
        out.update({entry["dag_run_id"]: round(entry["usd"], 6) for entry in answer["dag_runs"]})
    return out


@runs.command("cost")
@click.argument("dag_id")
@click.argument("run_id")
@output_option
@click.pass_context
def run_cost(ctx: click.Context, dag_id: str, run_id: str, output: str) -> None:
    """What RUN_ID of DAG_ID cost, in dollars, by service: its tries' recorded usage, and the scheduling overhead
    no try records (estimated). ``-o json``: the whole answer, with each try's breakdown."""
    try:
        cost = api(ctx).get(updraft_path_of("dags", dag_id, "dagRuns", run_id, "cost"))
    except ApiCallFailed as err:
        if err.status == 404:
            raise click.ClickException(f"DagRun with dag_id: '{dag_id}' and run_id: '{run_id}' not found") from None
        raise
    if output == "json":
        click.echo(render([cost], output))
        return
    rows = [{"service": line["name"], "quantity": f"{line['quantity']:g}", "unit": line["unit"],
             "usd": f"{line['usd']:.8f}", "estimated": "yes" if line["estimated"] else ""} for line in cost["lines"]]
    rows.append({"service": "total", "quantity": "", "unit": "", "usd": f"{cost['usd']:.8f}", "estimated": ""})
    click.echo(render(rows, output))
    if output == "table":
        tries = f"{len(cost['tries'])} tries ${cost['tries_usd']:.6f}"
        overhead = f"scheduling overhead ${cost['overhead_usd']:.6f}, estimated"
        click.echo(f"\nRun {run_id} of {dag_id}: ${cost['usd']:.6f} ({tries}, {overhead}), at {cost['region']}'s "
                   f"prices of {cost['prices_date']}.")
        if cost["unmetered_tries"]:
            click.echo(f"{cost['unmetered_tries']} tries ended without a record of what they used (not counted).")
        if cost["prices_region_missing"]:
            click.echo(f"No prices for {cost['prices_region_missing']} in the table: priced as {cost['region']}.")
