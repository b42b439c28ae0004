"""``updraft assets list|events|materialize``: Airflow's asset commands, through the environment's REST API."""

from __future__ import annotations

from typing import Any

import click

from updraft.cli.api_client import api, path_of
from updraft.cli.options import output_option
from updraft.cli.output import render


def asset_row(asset: dict[str, Any]) -> dict[str, Any]:
    last = asset.get("last_asset_event") or {}
    return {"id": asset["id"], "name": asset["name"], "uri": asset["uri"], "group": asset["group"],
            "scheduled_dags": ",".join(d["dag_id"] for d in asset["scheduled_dags"]),
            "last_event": last.get("timestamp") or ""}


def event_row(event: dict[str, Any]) -> dict[str, Any]:
    source = ".".join(filter(None, (event.get("source_dag_id"), event.get("source_task_id"))))
    return {"id": event["id"], "asset": event["name"], "timestamp": event["timestamp"], "source": source,
            "source_run_id": event.get("source_run_id") or "", "extra": event.get("extra") or {}}


def find_asset(ctx: click.Context, name: str) -> dict[str, Any]:
    """The asset named ``name`` (exactly), or a usage error."""
    for asset in api(ctx).pages(path_of("assets"), "assets", name_pattern=name):
        if asset["name"] == name:
            return asset
    raise click.ClickException(f"Asset {name} does not exist")


@click.group()
def assets() -> None:
    """Assets: what tasks produce (outlets) and what DAGs are scheduled on."""


@assets.command("list")
@output_option
@click.pass_context
def list_assets(ctx: click.Context, output: str) -> None:
    """List the assets the environment's DAGs name."""
    click.echo(render([asset_row(a) for a in api(ctx).pages(path_of("assets"), "assets")], output))


@assets.command("events")
@click.option("--asset", "name", help="Only this asset's events (by name).")
@output_option
@click.pass_context
def list_events(ctx: click.Context, name: str | None, output: str) -> None:
    """List asset events, oldest first."""
    params = {"asset_id": find_asset(ctx, name)["id"]} if name else {}
    events = api(ctx).pages(path_of("assets", "events"), "asset_events", order_by="timestamp", **params)
    click.echo(render([event_row(e) for e in events], output))


@assets.command("materialize")
@click.argument("name")
@output_option
@click.pass_context
def materialize(ctx: click.Context, name: str, output: str) -> None:
    """Run the DAG that produces asset NAME now."""
    run = api(ctx).post(path_of("assets", str(find_asset(ctx, name)["id"]), "materialize"))
    click.echo(render([{"dag_id": run["dag_id"], "dag_run_id": run["dag_run_id"], "run_type": run["run_type"],
                        "state": run["state"]}], output))
