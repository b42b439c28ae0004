"""``updraft tasks list|states|logs|why``: a DAG's tasks, what a run's task instances did, and why one is not
running, through the environment's REST API."""

from __future__ import annotations

from typing import Any

import click

from updraft.cli.api_client import ApiCallFailed, ApiClient, api, path_of
from updraft.cli.options import output_option
from updraft.cli.output import render
from updraft.cli.remote import dag_not_found, get_run, task_instances, wire_date
from updraft.model.records import UNMAPPED, TIKey


def dag_tasks(client: ApiClient, dag_id: str) -> list[dict[str, Any]]:
    """The DAG's tasks (``TaskResponse``), or the CLI's one-line "not found"."""
    try:
        found: list[dict[str, Any]] = client.get(path_of("dags", dag_id, "tasks"))["tasks"]
    except ApiCallFailed as err:
        raise dag_not_found(dag_id) if err.status == 404 else err from None
    return found


def state_rows(instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every task of the run: its instances (one per map index), and tasks not reached yet with state None,
    as Airflow lists a run's task instances before the scheduler touched them."""
    rows = [{"task_id": ti["task_id"], "map_index": ti["map_index"], "state": ti["state"],
             "try_number": ti["try_number"], "start_date": wire_date(ti["start_date"]),
             "end_date": wire_date(ti["end_date"])} for ti in instances]
    # In the order they ran (what a reader follows), the ones not started yet last.
    return sorted(rows, key=lambda r: (r["start_date"] is None, r["start_date"] or "", r["task_id"],
                                       r["map_index"]))


@click.group()
def tasks() -> None:
    """Tasks of a DAG, and task instances of its runs."""


@tasks.command("list")
@click.argument("dag_id")
@click.option("--tree", is_flag=True, help="Show the tasks as a tree from the DAG's roots, each task under "
              "the ones it runs after.")
@click.pass_context
def list_tasks(ctx: click.Context, dag_id: str, tree: bool) -> None:
    """The DAG's task ids, one a line (Airflow's `tasks list`)."""
    found = dag_tasks(api(ctx), dag_id)
    if not tree:
        click.echo("\n".join(sorted(t["task_id"] for t in found)))
        return
    click.echo("\n".join(tree_lines(found)))


def tree_lines(found: list[dict[str, Any]]) -> list[str]:
    """Airflow 2's ``dag.tree_view()``: each root, then its downstream tasks indented under it (a task with
    several upstreams appears under each)."""
    by_id = {t["task_id"]: t for t in found}
    downstream = {child for t in found for child in t["downstream_task_ids"]}
    lines: list[str] = []

    def walk(task_id: str, depth: int) -> None:
        task = by_id[task_id]
        lines.append("    " * depth + f"<Task({task['class_ref']['class_name']}): {task_id}>")
        for child in sorted(task["downstream_task_ids"]):
            walk(child, depth + 1)

    for root in sorted(set(by_id) - downstream):
        walk(root, 0)
    return lines


@tasks.command("states")
@click.argument("dag_id")
@click.argument("run_id")
@output_option
@click.pass_context
def states(ctx: click.Context, dag_id: str, run_id: str, output: str) -> None:
    """The state of every task instance of a run (Airflow's `tasks states-for-dag-run`)."""
    click.echo(render(state_rows(task_instances(api(ctx), dag_id, run_id)), output))


@tasks.command("logs")
@click.argument("dag_id")
@click.argument("run_id")
@click.argument("task_id")
@click.option("--try", "try_number", type=click.IntRange(min=1), default=None,
              help="Which try [default: the latest].")
@click.option("--map-index", type=click.IntRange(min=-1), default=-1, show_default=True,
              help="Which instance of a mapped task.")
@click.pass_context
def logs(ctx: click.Context, dag_id: str, run_id: str, task_id: str, try_number: int | None,
         map_index: int) -> None:
    """Print the log of one try of a task instance."""
    client = api(ctx)
    key = TIKey(dag_id, run_id, task_id, map_index)
    ti = _instance(client, key)
    tries = try_number or ti["try_number"]
    if tries == 0:
        raise click.ClickException(f"{key.label} of run {run_id} has not started a try yet")
    if tries > ti["try_number"]:
        had = f"{ti['try_number']} {'try' if ti['try_number'] == 1 else 'tries'}"
        raise click.ClickException(f"{key.label} of run {run_id} has {had}; there is no try {tries}")
    answer = client.get(path_of("dags", dag_id, "dagRuns", run_id, "taskInstances", task_id, "logs", str(tries)),
                        map_index=map_index)
    events = [str(message.get("event", "")) for message in answer["content"]]
    # The route answers a try without a log with one message saying so (Updraft writes a try's log when the try
    # ends), where Airflow's file handler would say the file is missing.
    missing = f"No log for try {tries} of {key.label}"
    if len(events) == 1 and events[0].startswith(missing):
        still = " (it may still be running)" if events[0] != missing else ""
        raise click.ClickException(f"no log for try {tries} of {key.label} in run {run_id}{still}")
    click.echo("\n".join(events))


def _instance(client: ApiClient, key: TIKey) -> dict[str, Any]:
    """The task instance, or why there is none: an unknown task, a mapped task asked without its index, or an
    index it does not have."""
    base = ("dags", key.dag_id, "dagRuns", key.run_id, "taskInstances", key.task_id)
    get_run(client, key.dag_id, key.run_id)
    try:
        found: dict[str, Any] = client.get(path_of(*base, *([] if key.map_index == UNMAPPED
                                                            else [str(key.map_index)])))
        return found
    except ApiCallFailed as err:
        if err.status != 404:
            raise
    try:
        client.get(path_of("dags", key.dag_id, "tasks", key.task_id))
    except ApiCallFailed as err:
        if err.status == 404:
            raise click.ClickException(f"Task {key.task_id} not found in DAG {key.dag_id}") from None
        raise
    mapped = [ti["map_index"] for ti in client.pages(path_of(*base, "listMapped"), "task_instances")]
    if mapped:
        raise click.ClickException(f"{key.task_id} is mapped: choose --map-index from {min(mapped)}..{max(mapped)}")
    raise click.ClickException(f"{key.label} of run {key.run_id} has not started a try yet")


@tasks.command("why")
@click.argument("dag_id")
@click.argument("run_id")
@click.argument("task_id")
@click.option("--map-index", type=click.IntRange(min=-1), default=-1, show_default=True,
              help="Which instance of a mapped task.")
@output_option
@click.pass_context
def why(ctx: click.Context, dag_id: str, run_id: str, task_id: str, map_index: int, output: str) -> None:
    """Why a task instance is not running: its unmet dependencies (Airflow's `tasks failed-deps`)."""
    # lazy: CLI start (the scheduler's deps only for `tasks why`)
    from updraft.scheduling.decisions import BlockedReason

    client = api(ctx)
    get_run(client, dag_id, run_id)
    try:
        answer = client.get(path_of("dags", dag_id, "dagRuns", run_id, "taskInstances", task_id, "dependencies"),
                            map_index=map_index)
    except ApiCallFailed as err:
        raise click.ClickException(str(err.detail)) if err.status == 404 else err from None
    reasons = [BlockedReason.from_dependency(d["name"], d["reason"]) for d in answer["dependencies"]]
    if not reasons and output != "json":
        click.echo("Task instance dependencies are all met.")
        return
    rows = [{"dependency": r.dep, "kind": r.kind.value, "reason": r.message} for r in reasons]
    click.echo(render(rows, output))


tasks.add_command(states, "states-for-dag-run")  # Airflow's spelling


