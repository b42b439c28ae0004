"""``updraft pools list|get|set|delete``: Airflow's pool commands against the running system."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from updraft.cli.options import output_option
from updraft.cli.output import render
from updraft.cli.system import system

if TYPE_CHECKING:
    from updraft.store.api import Pool


def pool_row(pool: Pool) -> dict[str, Any]:
    """Airflow's columns, plus the slots in use now (the store tracks them, Airflow's UI shows them)."""
    return {"pool": pool.name, "slots": pool.slots, "description": pool.description,
            "occupied_slots": pool.occupied}


@click.group()
def pools() -> None:
    """Manage pools (default_pool always exists and cannot be deleted)."""


@pools.command("list")
@output_option
@click.pass_context
def list_pools(ctx: click.Context, output: str) -> None:
    """List the pools."""
    click.echo(render([pool_row(p) for p in system(ctx).store.list_pools()], output))


@pools.command("get")
@click.argument("name")
@output_option
@click.pass_context
def get_pool(ctx: click.Context, name: str, output: str) -> None:
    """Show one pool."""
    pool = system(ctx).store.get_pool(name)
    if pool is None:
        raise click.ClickException(f"Pool {name} does not exist")
    click.echo(render([pool_row(pool)], output))


@pools.command("set")
@click.argument("name")
@click.argument("slots", type=click.IntRange(min=-1))
@click.argument("description", required=False)
@output_option
@click.pass_context
def set_pool(ctx: click.Context, name: str, slots: int, description: str | None, output: str) -> None:
    """Create or resize pool NAME to SLOTS (-1: unlimited); tasks holding slots keep them.

    Without DESCRIPTION an existing pool keeps its own.
    """
    store = system(ctx).store
    if description is None:
        existing = store.get_pool(name)
        description = existing.description if existing else ""
    pool = store.set_pool(name, slots, description)
    click.echo(render([pool_row(pool)], output))


@pools.command("delete")
@click.argument("name")
@click.pass_context
def delete_pool(ctx: click.Context, name: str) -> None:
    """Delete pool NAME (not default_pool)."""
    from updraft.model.limits import DEFAULT_POOL

    if name == DEFAULT_POOL:
        raise click.ClickException("default_pool cannot be deleted")
    if not system(ctx).store.delete_pool(name):
        raise click.ClickException(f"Pool {name} does not exist")
    click.echo(f"Pool {name} deleted")
