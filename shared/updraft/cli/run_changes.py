"""Commands that look at or change one run's state, through the environment's REST API: ``tasks clear`` and
``tasks state``, ``runs mark-success|mark-failed`` and ``dags state`` (Airflow's commands of those names, and the
UI's "mark run as" buttons).

``tasks clear`` takes Airflow's ``airflow tasks clear`` options: the tasks whose id matches ``-t`` (a regex,
searched as Airflow does), with their upstream/downstream, in the runs whose logical date is between ``-s`` and
``-e``; it lists what it would clear and asks, unless ``-y``. The clear itself is
``POST /dags/{dag_id}/clearTaskInstances``, so the cleared tasks rerun exactly as through the API.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import click

from updraft.cli.api_client import ApiCallFailed, api, path_of
from updraft.cli.dags import dags
from updraft.cli.output import render
from updraft.cli.runs import runs
from updraft.cli.tasks import tasks


def register() -> None:
    """Add these commands to the groups they belong to (``tasks``, ``runs``, ``dags``)."""
    tasks.add_command(clear_tasks)
    tasks.add_command(task_state)
    runs.add_command(mark_success)
    runs.add_command(mark_failed)
    dags.add_command(dag_state)


def _dag_task_ids(ctx: click.Context, dag_id: str) -> list[str]:
    try:
        listed = api(ctx).get(path_of("dags", dag_id, "tasks"))
    except ApiCallFailed as err:
        raise click.ClickException(f"Dag {dag_id} not found") if err.status == 404 else err from None
    return [t["task_id"] for t in listed["tasks"]]


def _matching(task_ids: list[str], regex: str | None) -> list[str]:
    """Airflow's ``partial_subset`` with a regex: the task ids it finds anywhere in (``re.search``)."""
    if regex is None:
        return task_ids
    try:
        pattern = re.compile(regex)
    except re.error as err:
        raise click.BadParameter(f"{regex!r} is not a regex: {err}", param_hint="'-t' / '--task-regex'") from None
    return [t for t in task_ids if pattern.search(t)]


def _iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).isoformat()


def _ti_row(ti: dict[str, Any]) -> dict[str, Any]:
    return {"dag_id": ti["dag_id"], "run_id": ti["dag_run_id"], "task_id": ti["task_id"],
            "map_index": ti["map_index"], "state": ti["state"], "try_number": ti["try_number"]}


@click.command("clear")
@click.argument("dag_id")
@click.option("-t", "--task-regex", default=None, help="Only the tasks whose id this regex finds.")
@click.option("-s", "--start-date", type=click.DateTime(), default=None,
              help="Only runs with a logical date from this one (UTC unless an offset is given).")
@click.option("-e", "--end-date", type=click.DateTime(), default=None, help="Only runs with a logical date up to this.")
@click.option("-f", "--only-failed", is_flag=True, help="Only failed (and upstream-failed) task instances.")
@click.option("-r", "--only-running", is_flag=True, help="Only running task instances.")
@click.option("-u", "--upstream", is_flag=True, help="Include the tasks upstream of those matched.")
@click.option("-d", "--downstream", is_flag=True, help="Include the tasks downstream of those matched.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask before clearing.")
@click.pass_context
def clear_tasks(ctx: click.Context, dag_id: str, task_regex: str | None, start_date: dt.datetime | None,
                end_date: dt.datetime | None, only_failed: bool, only_running: bool, upstream: bool,
                downstream: bool, yes: bool) -> None:
    """Clear task instances of DAG_ID so they run again (their runs are queued again when finished)."""
    if only_failed and only_running:
        raise click.UsageError("--only-failed and --only-running cannot both be given")
    task_ids = _matching(_dag_task_ids(ctx, dag_id), task_regex)
    if not task_ids:
        click.echo("No task matches; nothing was cleared.")
        return
    body: dict[str, Any] = {"task_ids": task_ids, "include_upstream": upstream, "include_downstream": downstream,
                            "only_failed": only_failed, "only_running": only_running,
                            "start_date": _iso(start_date), "end_date": _iso(end_date)}
    client = api(ctx)
    url = path_of("dags", dag_id, "clearTaskInstances")
    if not yes:
        found = client.post(url, {**body, "dry_run": True})["task_instances"]
        if not found:
            click.echo("No task instance to clear.")
            return
        click.echo(render([_ti_row(ti) for ti in found], "table"))
        if not click.confirm(f"You are about to clear these {len(found)} task instances. Are you sure?"):
            click.echo("Cancelled, nothing was cleared.")
            return
    cleared = client.post(url, {**body, "dry_run": False})["task_instances"]
    click.echo(f"Cleared {len(cleared)} task instance{'s' if len(cleared) != 1 else ''}.")


@click.command("state")
@click.argument("dag_id")
@click.argument("task_id")
@click.argument("run_id")
@click.option("-m", "--map-index", type=click.IntRange(min=-1), default=-1, show_default=True,
              help="The map index of a mapped task's instance.")
@click.pass_context
def task_state(ctx: click.Context, dag_id: str, task_id: str, run_id: str, map_index: int) -> None:
    """Print the state of one task instance (``None`` for one not reached yet), as ``airflow tasks state``."""
    segments = ["dags", dag_id, "dagRuns", run_id, "taskInstances", task_id]
    if map_index >= 0:
        segments.append(str(map_index))
    try:
        ti = api(ctx).get(path_of(*segments))
    except ApiCallFailed as err:
        raise click.ClickException(str(err.detail)) if err.status == 404 else err from None
    click.echo(str(ti["state"]))  # None for an instance not reached yet, as Airflow prints it


@click.command("state")
@click.argument("dag_id")
@click.argument("run_id")
@click.pass_context
def dag_state(ctx: click.Context, dag_id: str, run_id: str) -> None:
    """Print a run's state (and its conf, if it has one), as ``airflow dags state``."""
    try:
        run = api(ctx).get(path_of("dags", dag_id, "dagRuns", run_id))
    except ApiCallFailed as err:
        raise click.ClickException(str(err.detail)) if err.status == 404 else err from None
    click.echo(f"{run['state']}, {json.dumps(run['conf'])}" if run.get("conf") else run["state"])


def _mark(ctx: click.Context, dag_id: str, run_id: str, state: str) -> None:
    try:
        run = api(ctx).patch(path_of("dags", dag_id, "dagRuns", run_id), {"state": state})
    except ApiCallFailed as err:
        raise click.ClickException(str(err.detail)) if err.status == 404 else err from None
    click.echo(f"Run {run_id} of {dag_id} marked {run['state']}.")


@click.command("mark-success")
@click.argument("dag_id")
@click.argument("run_id")
@click.pass_context
def mark_success(ctx: click.Context, dag_id: str, run_id: str) -> None:
    """Mark a run successful: its running tasks succeed, the ones not finished are skipped."""
    _mark(ctx, dag_id, run_id, "success")


@click.command("mark-failed")
@click.argument("dag_id")
@click.argument("run_id")
@click.pass_context
def mark_failed(ctx: click.Context, dag_id: str, run_id: str) -> None:
    """Mark a run failed: its running tasks fail, the ones not finished are skipped."""
    _mark(ctx, dag_id, run_id, "failed")
