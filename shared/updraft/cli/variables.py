"""``updraft variables get|set|list|delete|import|export``: Airflow's variable commands, through the
environment's REST API.

Through the API a sensitive variable's value reads as ``***`` (as ``airflowctl`` shows it), so ``get`` and
``export`` print what the API serves; ``set`` and ``import`` write the value given.
"""

from __future__ import annotations

import json
from typing import Any

import click

from updraft.cli.api_client import ApiCallFailed, api, path_of
from updraft.cli.options import output_option
from updraft.cli.output import render


@click.group()
def variables() -> None:
    """Manage variables (the metastore's; backends and AIRFLOW_VAR_* are read-only)."""


def _all(ctx: click.Context) -> list[dict[str, Any]]:
    return list(api(ctx).pages(path_of("variables"), "variables"))


@variables.command("list")
@click.option("--show-values", is_flag=True, help="Show values (sensitive ones as the API masks them).")
@output_option
@click.pass_context
def list_variables(ctx: click.Context, show_values: bool, output: str) -> None:
    """List the variables' keys (Airflow's default), or keys and values."""
    rows = [{"key": v["key"], **({"val": v["value"], "description": v["description"] or ""} if show_values else {})}
            for v in _all(ctx)]
    click.echo(render(rows, output))


@variables.command("get")
@click.argument("key")
@click.option("--default", "-d", default=None, help="Value to print when the variable does not exist.")
@click.option("--json", "-j", "as_json", is_flag=True, help="Deserialize the value as JSON.")
@click.pass_context
def get_variable(ctx: click.Context, key: str, default: str | None, as_json: bool) -> None:
    """Print variable KEY's value."""
    try:
        value = api(ctx).get(path_of("variables", key))["value"]
    except ApiCallFailed as err:
        if err.status != 404:
            raise
        if default is None:
            raise click.ClickException(f"Variable {key} does not exist") from None
        value = default
    if as_json:
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise click.ClickException(f"Variable {key} is not valid JSON") from None
    click.echo(value)


def _set(ctx: click.Context, key: str, value: Any, description: str | None) -> None:
    client = api(ctx)
    body = {"key": key, "value": value, "description": description}
    try:
        client.patch(path_of("variables", key), body)
    except ApiCallFailed as err:
        if err.status != 404:
            raise
        client.post(path_of("variables"), body)


@variables.command("set")
@click.argument("key")
@click.argument("value")
@click.option("--description", default=None, help="Variable description.")
@click.option("--json", "-j", "as_json", is_flag=True, help="VALUE is JSON: store it serialized.")
@click.pass_context
def set_variable(ctx: click.Context, key: str, value: str, description: str | None, as_json: bool) -> None:
    """Create or replace variable KEY."""
    parsed: Any = value
    if as_json:
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            raise click.ClickException(f"VALUE of variable {key} is not valid JSON") from None
    _set(ctx, key, parsed, description)
    click.echo(f"Variable {key} created")


@variables.command("delete")
@click.argument("key")
@click.pass_context
def delete_variable(ctx: click.Context, key: str) -> None:
    """Delete variable KEY."""
    try:
        api(ctx).delete(path_of("variables", key))
    except ApiCallFailed as err:
        if err.status != 404:
            raise
    click.echo(f"Variable {key} deleted")


@variables.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--action-on-existing-key", "-a", type=click.Choice(["overwrite", "fail", "skip"]),
              default="overwrite", show_default=True, help="What to do with a key that already exists.")
@click.pass_context
def import_variables(ctx: click.Context, file: str, action_on_existing_key: str) -> None:
    """Import Airflow's variables JSON file: ``{key: value}`` or ``{key: {"value": ..., "description": ...}}``."""
    try:
        with open(file, encoding="utf-8") as handle:
            loaded = json.load(handle)
    except FileNotFoundError:
        raise click.ClickException("Missing variables file.") from None
    except json.JSONDecodeError as err:
        raise click.ClickException(f"Failed to load variables file: {err}") from None
    if not isinstance(loaded, dict):
        raise click.ClickException("Failed to load variables file: the file must hold a JSON object")
    existing = {v["key"] for v in _all(ctx)} if action_on_existing_key != "overwrite" else set()
    clashes = sorted(existing & set(loaded))
    if action_on_existing_key == "fail" and clashes:
        raise click.ClickException(f"Failed. These keys: {clashes} already exists.")
    done = failed = 0
    for key, entry in loaded.items():
        if key in clashes:
            continue
        value, description = entry, None
        if isinstance(entry, dict) and "value" in entry:
            value, description = entry["value"], entry.get("description")
        try:
            _set(ctx, key, value, description)
        except click.ClickException as err:
            click.echo(f"Variable import failed: {err.format_message()}")
            failed += 1
        else:
            done += 1
    click.echo(f"{done} of {len(loaded)} variables successfully updated.")
    if failed:
        click.echo(f"{failed} variable(s) failed to be updated.")
    if clashes:
        click.echo(f"The variables with these keys: {clashes} were skipped because they already exists")


@variables.command("export")
@click.argument("file", type=click.File("w", encoding="utf-8"))
@click.pass_context
def export_variables(ctx: click.Context, file: Any) -> None:
    """Write every variable to FILE in Airflow's format (``-`` for stdout)."""
    out: dict[str, Any] = {}
    for variable in _all(ctx):
        try:
            value = json.loads(variable["value"])
        except (TypeError, json.JSONDecodeError):
            value = variable["value"]
        if isinstance(value, str):
            value = variable["value"]
        if variable["description"] or (isinstance(value, dict) and "value" in value):
            out[variable["key"]] = {"value": value, "description": variable["description"]}
        else:
            out[variable["key"]] = value
    json.dump(out, file, sort_keys=True, indent=4)
    click.echo(f"{len(out)} variables successfully exported to {file.name}", err=file.name == "<stdout>")
