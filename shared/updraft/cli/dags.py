"""``updraft dags ...``: Airflow's ``airflow dags`` commands.

``list``, ``list-import-errors`` and ``next-execution`` answer from the environment's REST API, or, given a
DAGs folder (``--dags-folder`` or ``UPDRAFT_DAGS_FOLDER``), parse that folder themselves (like ``airflow dags
list --local``) with the same isolation the parser Lambda uses, so what the CLI shows is what the cloud will
see. ``dags test`` always parses a folder and runs the DAG on its own embedded AWS. ``trigger``, ``pause``,
``unpause``, ``upload`` and ``list-runs`` act on the environment (``updraft.cli.dag_commands``), ``show`` and
``details`` read it (``updraft.cli.dag_views``).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, TypeGuard

import click

from updraft.cli import dags_system
from updraft.cli.dag_commands import pause, trigger, unpause, upload
from updraft.cli.dag_info import dag_summary, next_runs
from updraft.cli.dag_views import details, show
from updraft.cli.environments import chosen_name
from updraft.cli.options import Command, conf_option, output_option, parse_conf, parse_date
from updraft.cli.output import render, stdout_to_stderr
from updraft.cli.progress import change_line
from updraft.cli.requirements import requirements_option, use_requirements
from updraft.cli.runs import list_runs
from updraft.local.endpoint import LocalEndpoint, NotRunning
from updraft.model.states import DagRunState

if TYPE_CHECKING:
    from updraft.local.dag_test import DagTestResult
    from updraft.parsing.folder import FolderParseResult

_LOCAL_HELP = ("Folder (or single file) of DAG files to parse here instead of asking the environment "
               "[env: UPDRAFT_DAGS_FOLDER, used only when no environment answers].")


def _dags_folder_option(func: Command, *, required: bool = True) -> Command:
    return click.option(
        "--dags-folder",
        "-S",
        "--subdir",
        "dags_folder",
        required=required,
        default=None,
        envvar="UPDRAFT_DAGS_FOLDER",
        type=click.Path(exists=True, file_okay=True, dir_okay=True),
        help=_LOCAL_HELP if not required else "Folder (or single file) of DAG files to parse "
        "[env: UPDRAFT_DAGS_FOLDER].",
    )(func)


def _plugins_folder_option(func: Command) -> Command:
    return click.option(
        "--plugins-folder",
        "plugins_folder",
        envvar="UPDRAFT_PLUGINS_FOLDER",
        type=click.Path(exists=True, file_okay=True, dir_okay=True),
        default=None,
        help="Airflow plugins folder (custom timetables), or an MWAA plugins.zip [default: a 'plugins' folder, "
        "else plugins.zip, beside the DAGs folder, if any; env: UPDRAFT_PLUGINS_FOLDER].",
    )(func)


def _folder_options(func: Command) -> Command:
    """What a command that always parses takes: the DAGs folder, and the plugins its timetables may use."""
    return _dags_folder_option(_plugins_folder_option(func))


def _optional_folder_options(func: Command) -> Command:
    """A folder given (flag or env) means parse it here; none means ask the running system."""
    return _dags_folder_option(_plugins_folder_option(func), required=False)


def _parse_here(dags_folder: str | None, ctx: click.Context) -> TypeGuard[str]:
    """Whether to parse ``dags_folder`` here rather than answer from the environment.

    ``--dags-folder`` on the command line always means parse. ``UPDRAFT_DAGS_FOLDER`` alone is the folder
    ``updraft local`` syncs, so while an environment answers (one is chosen, or local mode runs) its view (live
    pause state, what the parser stored) wins; with none the variable still lets these commands work offline.
    (The folder comes first: a TypeGuard narrows its first argument, so a True answer also tells mypy there is a
    folder.)
    """
    from click.core import ParameterSource

    if dags_folder is None:
        return False
    if ctx.get_parameter_source("dags_folder") is ParameterSource.ENVIRONMENT:
        return not _environment_answers(ctx)
    return True


def _environment_answers(ctx: click.Context) -> bool:
    if chosen_name(ctx) is not None:
        return True
    try:
        LocalEndpoint.read()
    except NotRunning:
        return False
    return True


def resolve_plugins_folder(dags_folder: str, plugins_folder: str | None) -> str | None:
    """The explicit folder, else ``<parent of the DAGs folder>/plugins`` when it exists, else ``plugins.zip``
    there; an archive (MWAA's plugins.zip) stands for the folder it unpacks to.

    Airflow keeps ``dags/`` and ``plugins/`` side by side under AIRFLOW_HOME, MWAA ``dags/`` and ``plugins.zip``;
    finding the sibling means the usual layout works without a flag.
    """
    if plugins_folder:
        found = os.path.abspath(plugins_folder)
    else:
        base = os.path.abspath(dags_folder)
        if os.path.isfile(base):
            base = os.path.dirname(base)
        siblings = [os.path.join(os.path.dirname(base), name) for name in ("plugins", "plugins.zip")]
        found = next((path for path in siblings if os.path.exists(path)), "")
        if not found:
            return None
    if os.path.isfile(found):
        from pathlib import Path

        # lazy: CLI start (requirements' installer only for a zipped plugins folder)
        from updraft.requirements.lines import RequirementsError
        from updraft.requirements.plugins_archive import unpack

        try:
            return str(unpack(Path(found)))
        except RequirementsError as exc:
            raise click.BadParameter(str(exc), param_hint="--plugins-folder") from None
    return found


def _parse(ctx: click.Context, dags_folder: str, plugins_folder: str | None) -> FolderParseResult:
    # lazy: tests patch parsing.folder.parse_dags_folder; the parser only for folder commands
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
    info = dag_summary(serialized, dags_folder)
    return {
        "dag_id": info["dag_id"],
        "fileloc": info["fileloc"],
        "owners": info["owners"],
        "is_paused": info["is_paused"],
        "tags": info["tags"],
    }


@click.group()
def dags() -> None:
    """Manage DAGs."""


@dags.command("list")
@_optional_folder_options
@output_option
@click.pass_context
def list_dags(ctx: click.Context, dags_folder: str | None, plugins_folder: str | None, output: str) -> None:
    """List the DAGs (the running system's, or those a local folder defines, as Airflow 3 finds them)."""
    if not _parse_here(dags_folder, ctx):
        return dags_system.list_dags(ctx, output)
    result = _parse(ctx, dags_folder, plugins_folder)
    rows = [_dag_row(d, result.dags_folder) for d in result.dags]
    if result.import_errors:
        click.echo(
            "Error: Failed to load all files. For details, run `updraft dags list-import-errors`",
            err=True,
        )
    click.echo(render(rows, output))


@dags.command("list-import-errors")
@_optional_folder_options
@output_option
@click.pass_context
def list_import_errors(ctx: click.Context, dags_folder: str | None, plugins_folder: str | None,
                       output: str) -> None:
    """List the DAG files that failed to load, with the error. Exits 1 if there are any."""
    if not _parse_here(dags_folder, ctx):
        errors = dags_system.import_errors(ctx)
    else:
        errors = [err.to_dict() for err in _parse(ctx, dags_folder, plugins_folder).import_errors]
    rows = [import_error_row(err, output) for err in errors]
    click.echo(render(rows, output))
    if rows:
        ctx.exit(1)


def import_error_row(err: dict[str, Any], output: str) -> dict[str, Any]:
    """Airflow's columns (filepath, error); JSON adds the line, DAG and one-line message for scripts."""
    row: dict[str, Any] = {"filepath": err["filename"], "error": err.get("stacktrace") or err["message"]}
    if output == "json":
        row.update(lineno=err.get("lineno"), dag_id=err.get("dag_id"), message=err["message"])
    return row


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
@_optional_folder_options
@click.pass_context
def next_execution(ctx: click.Context, dag_id: str, num_executions: int, dags_folder: str | None,
                   plugins_folder: str | None) -> None:
    """Print the logical dates of the DAG's next runs, one a line (Airflow's format)."""
    if not _parse_here(dags_folder, ctx):
        print_next_runs(dags_system.next_execution(ctx, dag_id, num_executions))
        return
    result = _parse(ctx, dags_folder, plugins_folder)
    serialized = result.dag(dag_id)
    if serialized is None:
        failed = [e for e in result.import_errors if e.dag_id == dag_id]
        detail = f": {failed[0].message}" if failed else ""
        raise click.ClickException(f"DAG {dag_id!r} was not found in {dags_folder}{detail}")
    plugins = resolve_plugins_folder(dags_folder, plugins_folder)
    print_next_runs(next_runs(serialized, num_executions, plugins_folder=plugins))


def print_next_runs(infos: list[str | None]) -> None:
    """One logical date a line; Airflow's warning and ``None`` when the schedule ends."""
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
@conf_option
@click.option("--workers", type=click.IntRange(min=1), default=4, show_default=True,
              help="Tasks run at once (the embedded worker pool), and so the parallelism: no try is claimed "
                   "before a worker can run it, so tries start in priority order.")
@click.option("--log-folder", type=click.Path(file_okay=False), default=None,
              help="Where task logs go [default: a temporary folder].")
@click.option("--skip-waits/--real-waits", default=True, show_default=True,
              help="Deferred tasks' waits (deferrable sensors, triggers) end at once, each skip printed; "
                   "--real-waits sits through them.")
@output_option
@requirements_option
@_folder_options
@click.pass_context
def test(ctx: click.Context, dag_id: str, logical_date: str | None, conf: str | None, workers: int,
         log_folder: str | None, skip_waits: bool, output: str, requirements: str | None, dags_folder: str,
         plugins_folder: str | None) -> None:
    """Run one DAG run to the end on the embedded AWS (like `airflow dags test`).

    Exit code 0 when the run succeeded, 1 when it failed, 2 on a usage or import error.
    """
    import contextlib
    import json

    conf_dict = parse_conf(conf)
    when = parse_date(logical_date)
    human = output != "json"
    # With -o json the JSON document is all that goes to standard output: whatever plugins, tasks and libraries
    # print during the run goes to standard error.
    with contextlib.nullcontext() if human else stdout_to_stderr():
        result = _test(ctx, dag_id, when, conf_dict, workers, log_folder, skip_waits, human, requirements,
                       dags_folder, plugins_folder)
    if human:
        rows = [{"task": label, **row} for label, row in result.tasks.items()]
        click.echo(render(rows, output if output != "table" else "table"))
        click.echo(f"DAG run {result.run_id}: {result.run_state} in {result.wall_s:.2f} s")
    else:
        click.echo(json.dumps(result.to_dict()))
    ctx.exit(0 if result.run_state == DagRunState.SUCCESS else 1)


def _test(ctx: click.Context, dag_id: str, when: Any, conf_dict: dict[str, Any] | None, workers: int,
          log_folder: str | None, skip_waits: bool, human: bool, requirements: str | None, dags_folder: str,
          plugins_folder: str | None) -> DagTestResult:
    """``dags test``'s run, its progress said as it goes (exits 2 on a usage or import error)."""
    # lazy: CLI start (dags test's embedded AWS, store and scheduler)
    from updraft.local.dag_test import DagTestError, metrics_file, run_dag_test

    # lazy: CLI start (no updraft.sdk for --help; test_cli_dags pins it)
    from updraft.sdk.exceptions import ParamValidationError

    use_requirements(dags_folder, requirements)
    config = ctx.find_root().obj
    plugins = resolve_plugins_folder(dags_folder, plugins_folder)
    options = config.parse_options(plugins_folder=plugins)
    if plugins:
        # This process plays the scheduler (it reads the stored DAG back): a plugin's timetable must be
        # registered here too, as Airflow's `dags test` loads the plugins before it runs anything.
        # lazy: only with a plugins folder (user plugins load here)
        from updraft.plugins import load_plugins_folder

        load_plugins_folder(plugins)

    def on_change(label: str, state: str, try_number: int) -> None:
        if human:
            click.echo(change_line(label, state, try_number))

    def on_skip(label: str, span: Any) -> None:
        # Said even with --output json (on stderr): a test that skipped time must never look like one that waited.
        click.echo(f"{label}: deferred; its wait of {span} skipped (--real-waits to sit through it)", err=not human)
    def on_sensor_skip(message: str) -> None:  # a sensor's wait, skipped: said even with --output json
        click.echo(message, err=True)

    def on_input_wait(task_ids: list[str]) -> None:  # as Airflow's dags test, which waits for them too
        click.echo(f"Waiting for Human-in-the-loop input for tasks: {task_ids} (no response can reach this "
                   "embedded test; Ctrl-C to stop it)", err=True)

    try:
        result = run_dag_test(dag_id, dags_folder=dags_folder, parse_options=options, logical_date=when,
                              conf=conf_dict, workers=workers, log_folder=log_folder, on_change=on_change,
                              skip_waits=skip_waits, on_skip=on_skip, on_sensor_skip=on_sensor_skip,
                              on_input_wait=on_input_wait, metrics_file=metrics_file())
    except (DagTestError, ParamValidationError) as err:  # a --conf the DAG's params reject is a usage error
        click.echo(f"Error: {err}", err=True)
        ctx.exit(2)
    return result


def _add_system_commands() -> None:
    """Commands that act on the running system live in their own modules; they join this group here."""
    for command in (trigger, pause, unpause, upload, show, details):
        dags.add_command(command)
    dags.add_command(list_runs, "list-runs")  # Airflow's spelling of `updraft runs list`


_add_system_commands()
