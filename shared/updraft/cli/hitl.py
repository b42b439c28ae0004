"""``updraft hitl list|respond``: Human-in-the-loop requests (Airflow's "required actions"), through the
environment's REST API (``hitlDetails``): list the requests waiting for a response (or all of them), and answer
one, which resumes its task at once."""

from __future__ import annotations

import json
from typing import Any

import click

from updraft.cli.api_client import api, path_of
from updraft.cli.options import output_option
from updraft.cli.output import render


def request_row(detail: dict[str, Any]) -> dict[str, Any]:
    ti = detail["task_instance"]
    user = detail.get("responded_by_user") or {}
    return {"dag_id": ti["dag_id"], "run_id": ti["dag_run_id"], "task_id": ti["task_id"],
            "map_index": ti["map_index"], "state": ti["state"], "subject": detail["subject"],
            "options": ", ".join(detail["options"]), "defaults": ", ".join(detail.get("defaults") or []),
            "multiple": detail["multiple"], "params": ", ".join(detail.get("params") or {}),
            "chosen_options": ", ".join(detail.get("chosen_options") or []), "responded_by": user.get("name")}


@click.group()
def hitl() -> None:
    """Human-in-the-loop requests: list them and respond (Airflow's required actions)."""


@hitl.command("list")
@click.option("--dag-id", default="~", show_default=True, help="Only this DAG's requests (~: every DAG).")
@click.option("--run-id", default="~", show_default=True, help="Only this run's requests (~: every run).")
@click.option("--all", "every", is_flag=True, help="Answered requests too (default: those waiting for a response).")
@output_option
@click.pass_context
def list_requests(ctx: click.Context, dag_id: str, run_id: str, every: bool, output: str) -> None:
    """List the Human-in-the-loop requests waiting for a response."""
    if dag_id == "~" and run_id != "~":
        raise click.UsageError("--run-id needs --dag-id")
    params: dict[str, Any] = {} if every else {"response_received": False}
    details = api(ctx).pages(path_of("dags", dag_id, "dagRuns", run_id, "hitlDetails"), "hitl_details", **params)
    click.echo(render([request_row(d) for d in details], output))


def _param(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise click.BadParameter(f"{text!r} is not NAME=VALUE", param_hint="--param")
    try:
        return name, json.loads(value)
    except ValueError:
        return name, value  # a bare word is a string, as a form field sends it


@hitl.command("respond")
@click.argument("dag_id")
@click.argument("run_id")
@click.argument("task_id")
@click.option("--option", "options", multiple=True, required=True,
              help="A chosen option (repeat it for a request with multiple=True).")
@click.option("--param", "params", multiple=True,
              help="NAME=VALUE for one of the request's params (VALUE read as JSON, else as text).")
@click.option("--map-index", type=int, default=-1, show_default=True)
@output_option
@click.pass_context
def respond(ctx: click.Context, dag_id: str, run_id: str, task_id: str, options: tuple[str, ...],
            params: tuple[str, ...], map_index: int, output: str) -> None:
    """Answer the request of TASK_ID in RUN_ID of DAG_ID; its task resumes at once."""
    body = {"chosen_options": list(options), "params_input": dict(_param(p) for p in params)}
    answer = api(ctx).patch(path_of("dags", dag_id, "dagRuns", run_id, "taskInstances", task_id, str(map_index),
                                    "hitlDetails"), body)
    click.echo(render([{"chosen_options": ", ".join(answer["chosen_options"]),
                        "params_input": json.dumps(answer.get("params_input") or {}),
                        "responded_by": (answer.get("responded_by") or {}).get("name"),
                        "responded_at": answer["responded_at"]}], output))
