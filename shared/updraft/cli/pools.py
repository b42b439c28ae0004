"""``updraft pools list|get|set|delete``: Airflow's pool commands, through the environment's REST API."""

from __future__ import annotations

from typing import Any

import click

from updraft.cli.api_client import ApiCallFailed, api, path_of
from updraft.cli.options import output_option
from updraft.cli.output import render
from updraft.model.limits import DEFAULT_POOL


def pool_row(pool: dict[str, Any]) -> dict[str, Any]:
    """Airflow's columns, plus the slots in use now (Airflow's UI shows them)."""
    return {"pool": pool["name"], "slots": pool["slots"], "description": pool.get("description") or "",
            "occupied_slots": pool["occupied_slots"]}


def _missing(name: str) -> click.ClickException:
    return click.ClickException(f"Pool {name} does not exist")


@click.group()
def pools() -> None:
    """Manage pools (default_pool always exists and cannot be deleted)."""


@pools.command("list")
@output_option
@click.pass_context
def list_pools(ctx: click.Context, output: str) -> None:
    """List the pools."""
    click.echo(render([pool_row(p) for p in api(ctx).pages(path_of("pools"), "pools")], output))


@pools.command("get")
@click.argument("name")
@output_option
@click.pass_context
def get_pool(ctx: click.Context, name: str, output: str) -> None:
    """Show one pool."""
    try:
        pool = api(ctx).get(path_of("pools", name))
    except ApiCallFailed as err:
        raise _missing(name) if err.status == 404 else err from None
    click.echo(render([pool_row(pool)], output))


@pools.command("set")
@click.argument("name")
@click.argument("slots", type=click.IntRange(min=-1))
@click.argument("description", required=False)
@click.option("--include-deferred/--exclude-deferred", default=None,
              help="Whether deferred tasks keep their slot of the pool (Airflow's include_deferred) "
                   "[default: unchanged; a new pool excludes them].")
@output_option
@click.pass_context
def set_pool(ctx: click.Context, name: str, slots: int, description: str | None, include_deferred: bool | None,
             output: str) -> None:
    """Create or resize pool NAME to SLOTS (-1: unlimited); tasks holding slots keep them.

    Without DESCRIPTION an existing pool keeps its own.
    """
    client = api(ctx)
    change: dict[str, Any] = {"slots": slots}
    if description is not None:
        change["description"] = description
    if include_deferred is not None:
        change["include_deferred"] = include_deferred
    try:
        pool = client.patch(path_of("pools", name), change)
    except ApiCallFailed as err:
        if err.status != 404:
            raise
        pool = client.post(path_of("pools"), {"name": name, "description": description or "", **change})
    click.echo(render([pool_row(pool)], output))


@pools.command("delete")
@click.argument("name")
@click.pass_context
def delete_pool(ctx: click.Context, name: str) -> None:
    """Delete pool NAME (not default_pool)."""
    if name == DEFAULT_POOL:
        raise click.ClickException("default_pool cannot be deleted")
    try:
        api(ctx).delete(path_of("pools", name))
    except ApiCallFailed as err:
        raise _missing(name) if err.status == 404 else err from None
    click.echo(f"Pool {name} deleted")
