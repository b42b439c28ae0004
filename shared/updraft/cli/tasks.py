"""``updraft tasks states|logs|why``: what a run's task instances did, and why one is not running, from the
running system."""

from __future__ import annotations

from typing import Any

import click

from updraft.cli.options import iso, output_option
from updraft.cli.output import render
from updraft.cli.system import require_run, system


def state_rows(store: Any, run: Any) -> list[dict[str, Any]]:
    """Every task of the run: its instances (one per map index), and tasks not reached yet with state None,
    as Airflow lists a run's task instances before the scheduler touched them."""
    tis = store.get_run_tis(run.dag_id, run.run_id)
    rows = {(ti.task_id, ti.map_index): {
        "task_id": ti.task_id, "map_index": ti.map_index, "state": ti.state.value if ti.state else None,
        "try_number": ti.try_number, "start_date": iso(ti.start_date), "end_date": iso(ti.end_date)} for ti in tis}
    sdag = store.get_serialized_dag(run.dag_id, run.dag_hash)
    touched = {task_id for task_id, _ in rows}
    for task in getattr(sdag, "tasks", []):
        if task.task_id not in touched:
            rows[(task.task_id, -1)] = {"task_id": task.task_id, "map_index": -1, "state": None, "try_number": 0,
                                        "start_date": None, "end_date": None}
    # In the order they ran (what a reader follows), the ones not started yet last.
    return sorted(rows.values(), key=lambda r: (r["start_date"] is None, r["start_date"] or "", r["task_id"],
                                                 r["map_index"]))


@click.group()
def tasks():
    """Task instances of the running system's runs."""


@tasks.command("states")
@click.argument("dag_id")
@click.argument("run_id")
@output_option
@click.pass_context
def states(ctx, dag_id, run_id, output):
    """The state of every task instance of a run (Airflow's `tasks states-for-dag-run`)."""
    store = system(ctx, dags=True).store
    run = require_run(store, dag_id, run_id)
    click.echo(render(state_rows(store, run), output))


@tasks.command("logs")
@click.argument("dag_id")
@click.argument("run_id")
@click.argument("task_id")
@click.option("--try", "try_number", type=click.IntRange(min=1), default=None,
              help="Which try [default: the latest].")
@click.option("--map-index", type=click.IntRange(min=-1), default=-1, show_default=True,
              help="Which instance of a mapped task.")
@click.pass_context
def logs(ctx, dag_id, run_id, task_id, try_number, map_index):
    """Print the log of one try of a task instance."""
    from updraft.model.records import TIKey

    services = system(ctx, dags=True)
    store = services.store
    require_run(store, dag_id, run_id)
    key = TIKey(dag_id, run_id, task_id, map_index)
    ti = store.get_ti(key)
    if ti is None:
        raise click.ClickException(_no_instance(store, key))
    tries = try_number or ti.try_number
    if tries == 0:
        raise click.ClickException(f"{key.label} of run {run_id} has not started a try yet")
    if tries > ti.try_number:
        had = f"{ti.try_number} {'try' if ti.try_number == 1 else 'tries'}"
        raise click.ClickException(f"{key.label} of run {run_id} has {had}; there is no try {tries}")
    text = services.log_sink.read(key, tries) if services.log_sink is not None else None
    if text is None:
        still = " (it may still be running)" if ti.state and ti.state.value in ("queued", "running") else ""
        raise click.ClickException(f"no log for try {tries} of {key.label} in run {run_id}{still}")
    click.echo(text, nl=not text.endswith("\n"))


def _no_instance(store: Any, key: Any) -> str:
    """Why there is no such instance: an unknown task, a mapped task asked without its index, or not yet."""
    run = store.get_run(key.dag_id, key.run_id)
    sdag = store.get_serialized_dag(key.dag_id, run.dag_hash)
    task_ids = {t.task_id for t in getattr(sdag, "tasks", [])}
    if key.task_id not in task_ids:
        return f"Task {key.task_id} not found in DAG {key.dag_id}"
    indexes = sorted(ti.map_index for ti in store.get_run_tis(key.dag_id, key.run_id) if ti.task_id == key.task_id)
    if indexes and key.map_index not in indexes:
        return f"{key.task_id} is mapped: choose --map-index from {indexes[0]}..{indexes[-1]}"
    return f"{key.label} of run {key.run_id} has not started a try yet"


@tasks.command("why")
@click.argument("dag_id")
@click.argument("run_id")
@click.argument("task_id")
@click.option("--map-index", type=click.IntRange(min=-1), default=-1, show_default=True,
              help="Which instance of a mapped task.")
@output_option
@click.pass_context
def why(ctx, dag_id, run_id, task_id, map_index, output):
    """Why a task instance is not running: its unmet dependencies (Airflow's `tasks failed-deps`)."""
    from updraft.scheduling.why import NotFound, why_not_running

    store = system(ctx, dags=True).store
    require_run(store, dag_id, run_id)
    try:
        reasons = why_not_running(store, dag_id, run_id, task_id, map_index)
    except NotFound as err:
        raise click.ClickException(str(err)) from None
    if not reasons and output != "json":
        click.echo("Task instance dependencies are all met.")
        return
    rows = [{"dependency": r.dep, "kind": r.kind.value, "reason": r.message} for r in reasons]
    click.echo(render(rows, output))


tasks.add_command(states, "states-for-dag-run")  # Airflow's spelling
