"""``updraft connections get|add|list|delete|import|export``: Airflow's connection commands, through the
environment's REST API. Passwords come back from the API as ``***`` (as with ``airflowctl``), so ``export``
writes them masked; ``add`` and ``import`` write them as given."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from updraft.cli.api_client import ApiCallFailed, api, path_of
from updraft.cli.options import output_option
from updraft.cli.output import render

if TYPE_CHECKING:
    from updraft.sdk.connection import Connection

FIELDS = ("conn_type", "description", "login", "password", "host", "port", "schema", "extra")


@click.group()
def connections() -> None:
    """Manage connections (the metastore's; backends and AIRFLOW_CONN_* are read-only)."""


def _all(ctx: click.Context) -> list[dict[str, Any]]:
    return list(api(ctx).pages(path_of("connections"), "connections"))


def _row(conn: dict[str, Any]) -> dict[str, Any]:
    return {"conn_id": conn["connection_id"], "conn_type": conn["conn_type"], "description": conn["description"],
            "host": conn["host"], "schema": conn["schema"], "login": conn["login"], "password": conn["password"],
            "port": conn["port"], "extra_dejson": json.loads(conn["extra"]) if conn["extra"] else {}}


@connections.command("list")
@click.option("--show-values", is_flag=True, help="Show every field (passwords as the API masks them).")
@output_option
@click.pass_context
def list_connections(ctx: click.Context, show_values: bool, output: str) -> None:
    """List the connections' ids and types (Airflow's default), or every field."""
    rows = [_row(c) if show_values else {"conn_id": c["connection_id"], "conn_type": c["conn_type"]}
            for c in _all(ctx)]
    click.echo(render(rows, output))


@connections.command("get")
@click.argument("conn_id")
@output_option
@click.pass_context
def get_connection(ctx: click.Context, conn_id: str, output: str) -> None:
    """Show connection CONN_ID."""
    try:
        conn = api(ctx).get(path_of("connections", conn_id))
    except ApiCallFailed as err:
        raise click.ClickException("Connection not found.") if err.status == 404 else err from None
    click.echo(render([_row(conn)], output))


def _body(conn_id: str, conn: Connection) -> dict[str, Any]:
    return {"connection_id": conn_id, **{name: getattr(conn, name) for name in FIELDS}}


@connections.command("add")
@click.argument("conn_id")
@click.option("--conn-uri", default=None, help="The connection as Airflow's URI.")
@click.option("--conn-json", default=None, help="The connection as Airflow's JSON.")
@click.option("--conn-type", default=None)
@click.option("--conn-description", default=None)
@click.option("--conn-host", default=None)
@click.option("--conn-login", default=None)
@click.option("--conn-password", default=None)
@click.option("--conn-schema", default=None)
@click.option("--conn-port", type=int, default=None)
@click.option("--conn-extra", default=None, help="JSON object of extra fields.")
@click.pass_context
def add_connection(ctx: click.Context, conn_id: str, conn_uri: str | None, conn_json: str | None,
                   conn_type: str | None, conn_description: str | None, conn_host: str | None,
                   conn_login: str | None, conn_password: str | None, conn_schema: str | None,
                   conn_port: int | None, conn_extra: str | None) -> None:
    """Add connection CONN_ID from a URI, JSON, or fields (Airflow's rules for combining them)."""
    fields = {"conn_type": conn_type, "conn_host": conn_host, "conn_login": conn_login,
              "conn_password": conn_password, "conn_schema": conn_schema, "conn_port": conn_port}
    if not conn_type and not (conn_json or conn_uri):
        raise click.ClickException("Must supply either conn-uri or conn-json if not supplying conn-type")
    if conn_json and conn_uri:
        raise click.ClickException("Cannot supply both conn-uri and conn-json")
    if conn_uri or conn_json:
        invalid = [name for name, value in fields.items() if value is not None]
        if conn_json and conn_extra:
            invalid.append("--conn-extra")
        if invalid:
            raise click.ClickException("The following args are not compatible with the "
                                       f"--conn-{'uri' if conn_uri else 'json'} flag: {invalid!r}")
    # lazy: CLI start (no updraft.sdk for --help; test_cli_dags pins it)
    from updraft.sdk.connection import Connection  # the SDK only for commands that parse one (lean --help)
    from updraft.sdk.exceptions import AirflowException

    try:
        if conn_uri:
            conn = Connection(conn_id=conn_id, uri=conn_uri)
            conn.description = conn_description
        elif conn_json:
            conn = Connection.from_json(conn_json, conn_id=conn_id)
            if not conn.conn_type:
                raise click.ClickException("conn-json is invalid; must supply conn-type")
        else:
            conn = Connection(conn_id=conn_id, conn_type=conn_type, description=conn_description, host=conn_host,
                              login=conn_login, password=conn_password, schema=conn_schema, port=conn_port)
        if conn_extra is not None and not conn_json:
            conn.extra = conn_extra
    except (AirflowException, ValueError) as err:
        raise click.ClickException(f"Could not create connection. {err}") from None
    try:
        api(ctx).post(path_of("connections"), _body(conn_id, conn))
    except ApiCallFailed as err:
        if err.status == 409:
            raise click.ClickException(f"A connection with `conn_id`={conn_id} already exists.") from None
        raise
    click.echo(f"Successfully added `conn_id`={conn_id}")


@connections.command("delete")
@click.argument("conn_id")
@click.pass_context
def delete_connection(ctx: click.Context, conn_id: str) -> None:
    """Delete connection CONN_ID."""
    try:
        api(ctx).delete(path_of("connections", conn_id))
    except ApiCallFailed as err:
        if err.status == 404:
            raise click.ClickException(f"Did not find a connection with `conn_id`={conn_id}") from None
        raise
    click.echo(f"Successfully deleted connection with `conn_id`={conn_id}")


def _without_own_id(conn_id: str, entry: Any) -> Any:
    """An imported object may repeat its own key as ``conn_id`` (Airflow's import rule); another id is refused."""
    if isinstance(entry, dict) and "conn_id" in entry:
        if entry["conn_id"] != conn_id:
            raise ValueError(f"Mismatch conn_id. The dictionary key has the value: {entry['conn_id']}. "
                             f"The item has the value: {conn_id}.")
        return {k: v for k, v in entry.items() if k != "conn_id"}
    return entry


@connections.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--overwrite", is_flag=True, help="Replace a connection that already exists.")
@click.pass_context
def import_connections(ctx: click.Context, file: str, overwrite: bool) -> None:
    """Import Airflow's connections JSON file: ``{conn_id: {fields}}`` or ``{conn_id: "uri"}``."""
    try:
        with open(file, encoding="utf-8") as handle:
            loaded = json.load(handle)
    except FileNotFoundError:
        raise click.ClickException("Missing connections file.") from None
    except json.JSONDecodeError as err:
        raise click.ClickException(f"Failed to load connections file: {err}") from None
    if not isinstance(loaded, dict):
        raise click.ClickException("Failed to load connections file: the file must hold a JSON object")
    # lazy: CLI start (no updraft.sdk for --help; test_cli_dags pins it)
    from updraft.sdk.connection import Connection
    from updraft.sdk.exceptions import AirflowException

    client = api(ctx)
    for conn_id, entry in loaded.items():
        try:
            conn = (Connection(conn_id=conn_id, uri=entry) if isinstance(entry, str)
                    else Connection.from_json(json.dumps(_without_own_id(conn_id, entry)), conn_id=conn_id))
            body = _body(conn_id, conn)
            try:
                client.post(path_of("connections"), body)
            except ApiCallFailed as err:
                if err.status != 409:
                    raise
                if not overwrite:
                    click.echo(f"Could not import connection {conn_id}: connection already exists.")
                    continue
                client.patch(path_of("connections", conn_id), body)
        except click.ClickException as err:
            click.echo(f"Could not import connection {conn_id}: {err.format_message()}")
            continue
        except (AirflowException, ValueError, TypeError) as err:
            click.echo(f"Could not import connection {conn_id}: {err}")
            continue
        click.echo(f"Imported connection {conn_id}")


@connections.command("export")
@click.argument("file", type=click.File("w", encoding="utf-8"))
@click.pass_context
def export_connections(ctx: click.Context, file: Any) -> None:
    """Write every connection to FILE in Airflow's JSON format (``-`` for stdout)."""
    out = {c["connection_id"]: {name: c[name] for name in FIELDS} for c in _all(ctx)}
    file.write(json.dumps(out, indent=2))
    click.echo(f"Connections successfully exported to {file.name}.", err=file.name == "<stdout>")
