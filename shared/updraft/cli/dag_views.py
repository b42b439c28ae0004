"""``updraft dags show|details``: a DAG as the environment's API describes it, in Airflow CLI's shapes."""

from __future__ import annotations

import json
from typing import Any

import click

from updraft.cli.api_client import api
from updraft.cli.options import output_option
from updraft.cli.output import render
from updraft.cli.remote import get_dag
from updraft.cli.tasks import dag_tasks


def _dot_id(value: str) -> str:
    """A DOT identifier: quoted (task ids may hold dots and dashes), with quotes and backslashes escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot_source(dag_id: str, tasks: list[dict[str, Any]]) -> str:
    """The graph as Airflow's ``dags show`` prints it (``airflow.utils.dot_renderer.render_dag``'s DOT):
    left to right, one rounded box a task in its ``ui_color``, one edge per dependency."""
    lines = [f"digraph {_dot_id(dag_id)} {{", f"\tgraph [label={_dot_id(dag_id)} labelloc=t rankdir=LR]"]
    for task in sorted(tasks, key=lambda t: t["task_id"]):
        lines.append(f"\t{_dot_id(task['task_id'])} [color={_dot_id(task['ui_fgcolor'] or '#000')} "
                     f"fillcolor={_dot_id(task['ui_color'] or '#fff')} label={_dot_id(task['task_display_name'])} "
                     'shape=rectangle style="filled,rounded"]')
    for task in sorted(tasks, key=lambda t: t["task_id"]):
        lines += [f"\t{_dot_id(task['task_id'])} -> {_dot_id(child)}" for child in sorted(task["downstream_task_ids"])]
    lines.append("}")
    return "\n".join(lines)


@click.command("show")
@click.argument("dag_id")
@click.pass_context
def show(ctx: click.Context, dag_id: str) -> None:
    """Print DAG_ID's graph of tasks and edges as DOT (render it with `dot -Tpng`)."""
    click.echo(dot_source(dag_id, dag_tasks(api(ctx), dag_id)))


@click.command("details")
@click.argument("dag_id")
@output_option
@click.pass_context
def details(ctx: click.Context, dag_id: str, output: str) -> None:
    """DAG_ID's details: schedule, next run, params, limits... (Airflow's `dags details`)."""
    found = get_dag(api(ctx), dag_id, details=True)
    if output == "json":
        click.echo(render([found], output))
        return
    rows = [{"property_name": key, "property_value": value if isinstance(value, str) or value is None
             else json.dumps(value)} for key, value in found.items()]
    click.echo(render(rows, output))
