"""What ``dags list``, ``list-import-errors`` and ``next-execution`` answer from the environment's REST API.

The environment already holds what its parser found (DAGs, import errors) and the next run its scheduler will
create, so nothing here imports a DAG file: the answer is the environment's, not a fresh local parse.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import click

from updraft.cli.api_client import api, path_of
from updraft.cli.output import render
from updraft.cli.remote import get_dag, wire_date

IMPORT_ERRORS_HINT = "Error: Failed to load all files. For details, run `updraft dags list-import-errors`"


def dag_row(dag: dict[str, Any]) -> dict[str, Any]:
    """Airflow's ``dags list`` columns (plus tags); fileloc is where the environment reads the file from."""
    return {"dag_id": dag["dag_id"], "fileloc": dag["fileloc"], "owners": ", ".join(dag["owners"]),
            "is_paused": dag["is_paused"], "tags": sorted(tag["name"] for tag in dag["tags"])}


def list_dags(ctx: click.Context, output: str) -> None:
    client = api(ctx)
    rows = [dag_row(dag) for dag in client.pages(path_of("dags"), "dags")]
    if client.get(path_of("importErrors"), limit=1)["total_entries"]:
        click.echo(IMPORT_ERRORS_HINT, err=True)
    click.echo(render(rows, output))


def import_errors(ctx: click.Context) -> list[dict[str, Any]]:
    """The environment's import errors in the parser's shape (``ImportErrorRecord.to_dict``): the message is
    the stack trace's last line, the line number the last one it names in the failing file."""
    out = []
    for err in api(ctx).pages(path_of("importErrors"), "import_errors"):
        trace = err["stack_trace"]
        out.append({"filename": err["filename"], "stacktrace": trace, "lineno": _line_in(trace, err["filename"]),
                    "dag_id": None, "message": trace.strip().splitlines()[-1] if trace.strip() else ""})
    return out


def _line_in(trace: str, filename: str) -> int | None:
    import re

    lines = re.findall(r'File "[^"]*' + re.escape(filename) + r'", line (\d+)', trace)
    return int(lines[-1]) if lines else None


def next_execution(ctx: click.Context, dag_id: str, n: int) -> list[str | None]:
    """The stored next run (what the scheduler creates next), then the cron schedule's following ones.

    A trailing None means the schedule ends there, as the local variant reports it.
    """
    dag = get_dag(api(ctx), dag_id, details=True)
    if dag["is_paused"]:
        click.echo("[INFO] Please be reminded this DAG is PAUSED now.", err=True)
    first = wire_date(dag["next_dagrun_logical_date"])
    if first is None:
        return [None]
    out: list[str | None] = [first]
    if n > 1:
        out += _following(dag, dt.datetime.fromisoformat(first), n - 1)
    if len(out) < n:
        out.append(None)
    return out


def _following(dag: dict[str, Any], first: dt.datetime, n: int) -> list[str]:
    """The ``n`` logical dates after ``first``: the API gives the next run only, and a cron schedule's later
    logical dates are its next fire times (for a data-interval and a trigger timetable alike)."""
    # lazy: CLI start (no updraft.sdk or timetables for --help; test_cli_dags pins it)
    from updraft.sdk.exceptions import AirflowTimetableInvalid
    from updraft.timetables.planning import next_dagruns
    from updraft.timetables.trigger import CronTriggerTimetable

    summary = dag["timetable_summary"] or ""
    if summary == "@once":
        return []
    timetable = CronTriggerTimetable(summary, timezone=dag.get("timezone") or "UTC")
    try:
        timetable.validate()
    except AirflowTimetableInvalid:
        raise click.ClickException(
            f"DAG {dag['dag_id']!r} runs on {summary!r}, not a cron schedule: only its next logical date is known "
            "to the environment's API; for more, parse its file with --dags-folder") from None
    end = dag.get("end_date")
    infos = next_dagruns(timetable, start_date=first + dt.timedelta(microseconds=1),
                         end_date=dt.datetime.fromisoformat(end) if end else None, catchup=True, n=n)
    return [info.logical_date.isoformat() for info in infos]
