"""``updraft dags ...``: Airflow's ``airflow dags`` commands over a local DAGs folder.

These commands work on a local DAGs folder: they parse it themselves (like
``airflow dags list --local``), with the same isolation the parser Lambda
uses, so what the CLI shows is what the cloud will see; ``dags test`` then
runs a DAG on the embedded AWS. Talking to a running system comes with local
mode and the API.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from updraft.cli.output import OUTPUT_FORMATS, render


def _dags_folder_option(func):
    return click.option(
        "--dags-folder",
        "-S",
        "--subdir",
        "dags_folder",
        required=True,
        envvar="UPDRAFT_DAGS_FOLDER",
        type=click.Path(exists=True, file_okay=True, dir_okay=True),
        help="Folder (or single file) of DAG files to parse [env: UPDRAFT_DAGS_FOLDER].",
    )(func)


def _plugins_folder_option(func):
    return click.option(
        "--plugins-folder",
        "plugins_folder",
        envvar="UPDRAFT_PLUGINS_FOLDER",
        type=click.Path(exists=True, file_okay=False, dir_okay=True),
        default=None,
        help="Airflow plugins folder (custom timetables) [default: a 'plugins' folder beside the DAGs "
        "folder, if any; env: UPDRAFT_PLUGINS_FOLDER].",
    )(func)


def _folder_options(func):
    """What every ``dags`` command parses: the DAGs folder, and the plugins whose timetables it may use."""
    return _dags_folder_option(_plugins_folder_option(func))


def resolve_plugins_folder(dags_folder: str, plugins_folder: str | None) -> str | None:
    """The explicit folder, else ``<parent of the DAGs folder>/plugins`` when it exists.

    Airflow keeps ``dags/`` and ``plugins/`` side by side under AIRFLOW_HOME;
    finding the sibling means the usual layout works without a flag.
    """
    if plugins_folder:
        return os.path.abspath(plugins_folder)
    base = os.path.abspath(dags_folder)
    if os.path.isfile(base):
        base = os.path.dirname(base)
    sibling = os.path.join(os.path.dirname(base), "plugins")
    return sibling if os.path.isdir(sibling) else None


def _output_option(func):
    return click.option(
        "--output",
        "-o",
        type=click.Choice(OUTPUT_FORMATS),
        default="table",
        show_default=True,
        help="Output format.",
    )(func)


def _parse(ctx: click.Context, dags_folder: str, plugins_folder: str | None):
    from updraft.parsing.folder import parse_dags_folder

    config = ctx.find_root().obj
    plugins = resolve_plugins_folder(dags_folder, plugins_folder)
    result = parse_dags_folder(dags_folder, config.parse_options(plugins_folder=plugins))
    if config.verbose:
        for parsed in result.files:
            if parsed.logs.strip():
                click.echo(f"--- output of {parsed.relative_path} ---", err=True)
                click.echo(parsed.logs.rstrip("\n"), err=True)
        click.echo(
            f"[parsed {len(result.files)} files in {result.duration_s:.2f}s, "
            f"skipped {len(result.skipped)} (safe mode)]",
            err=True,
        )
    return result


def _dag_row(serialized: dict[str, Any], dags_folder: str) -> dict[str, Any]:
    from updraft.cli.dag_info import dag_summary

    info = dag_summary(serialized, dags_folder)
    return {
        "dag_id": info["dag_id"],
        "fileloc": info["fileloc"],
        "owners": info["owners"],
        "is_paused": info["is_paused"],
        "tags": info["tags"],
    }


@click.group()
def dags():
    """Manage DAGs."""


@dags.command("list")
@_folder_options
@_output_option
@click.pass_context
def list_dags(ctx, dags_folder, plugins_folder, output):
    """List the DAGs the folder defines (as Airflow 3 finds them)."""
    result = _parse(ctx, dags_folder, plugins_folder)
    rows = [_dag_row(d, result.dags_folder) for d in result.dags]
    if result.import_errors:
        click.echo(
            "Error: Failed to load all files. For details, run `updraft dags list-import-errors`",
            err=True,
        )
    click.echo(render(rows, output))


@dags.command("list-import-errors")
@_folder_options
@_output_option
@click.pass_context
def list_import_errors(ctx, dags_folder, plugins_folder, output):
    """List the DAG files that failed to load, with the error. Exits 1 if there are any."""
    result = _parse(ctx, dags_folder, plugins_folder)
    rows: list[dict[str, Any]] = []
    for err in result.import_errors:
        row: dict[str, Any] = {"filepath": err.filename, "error": err.stacktrace or err.message}
        if output == "json":
            row.update(lineno=err.lineno, dag_id=err.dag_id, message=err.message)
        rows.append(row)
    click.echo(render(rows, output))
    if rows:
        ctx.exit(1)


@dags.command("next-execution")
@click.argument("dag_id")
@click.option(
    "--num-executions",
    "-n",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="The number of next logical dates to show.",
)
@_folder_options
@click.pass_context
def next_execution(ctx, dag_id, num_executions, dags_folder, plugins_folder):
    """Print the logical dates of the DAG's next runs, one a line (Airflow's format)."""
    from updraft.cli.dag_info import next_runs

    result = _parse(ctx, dags_folder, plugins_folder)
    serialized = result.dag(dag_id)
    if serialized is None:
        failed = [e for e in result.import_errors if e.dag_id == dag_id]
        detail = f": {failed[0].message}" if failed else ""
        raise click.ClickException(f"DAG {dag_id!r} was not found in {dags_folder}{detail}")
    plugins = resolve_plugins_folder(dags_folder, plugins_folder)
    infos = next_runs(serialized, num_executions, plugins_folder=plugins)
    for info in infos:
        if info is None:
            click.echo(
                "[WARN] No following schedule can be found. "
                "This DAG may have schedule interval '@once' or `None`.",
                err=True,
            )
            click.echo("None")
            break
        click.echo(info)
    sys.stdout.flush()


@dags.command("test")
@click.argument("dag_id")
@click.argument("logical_date", required=False)
@click.option("--conf", "-c", default=None, help="JSON conf for the run (validated against the DAG's params).")
@click.option("--workers", type=click.IntRange(min=1), default=4, show_default=True,
              help="Tasks run at once (the embedded worker pool).")
@click.option("--log-folder", type=click.Path(file_okay=False), default=None,
              help="Where task logs go [default: a temporary folder].")
@_output_option
@_folder_options
@click.pass_context
def test(ctx, dag_id, logical_date, conf, workers, log_folder, output, dags_folder, plugins_folder):
    """Run one DAG run to the end on the embedded AWS (like `airflow dags test`).

    Exit code 0 when the run succeeded, 1 when it failed, 2 on a usage or import error.
    """
    import json

    from updraft.local.dag_test import DagTestError, run_dag_test

    try:
        conf_dict = json.loads(conf) if conf else None
    except json.JSONDecodeError as err:
        raise click.UsageError(f"--conf is not valid JSON: {err}") from None
    if conf_dict is not None and not isinstance(conf_dict, dict):
        raise click.UsageError("--conf must be a JSON object")
    when = _parse_logical_date(logical_date)
    config = ctx.find_root().obj
    options = config.parse_options(plugins_folder=resolve_plugins_folder(dags_folder, plugins_folder))
    human = output != "json"

    def on_change(label: str, state: str, try_number: int) -> None:
        if human:
            click.echo(f"{_clock()}  {label:<40} {state}" + (f" (try {try_number})" if try_number else ""))

    try:
        result = run_dag_test(dag_id, dags_folder=dags_folder, parse_options=options, logical_date=when,
                              conf=conf_dict, workers=workers, log_folder=log_folder, on_change=on_change)
    except DagTestError as err:
        click.echo(f"Error: {err}", err=True)
        ctx.exit(2)
    if human:
        rows = [{"task": label, **row} for label, row in result.tasks.items()]
        click.echo(render(rows, output if output != "table" else "table"))
        click.echo(f"DAG run {result.run_id}: {result.run_state} in {result.wall_s:.2f} s")
    else:
        click.echo(json.dumps(result.to_dict()))
    ctx.exit(0 if result.run_state == "success" else 1)


def _parse_logical_date(value: str | None):
    if value is None:
        return None
    import pendulum

    try:
        parsed = pendulum.parse(value, tz="UTC")
    except (ValueError, pendulum.parsing.exceptions.ParserError) as err:
        raise click.UsageError(f"LOGICAL_DATE {value!r} is not a date: {err}") from None
    return parsed


def _clock() -> str:
    import datetime as dt

    return dt.datetime.now().strftime("%H:%M:%S")
