"""What ``dags list`` and ``dags next-execution`` answer from the running system's store.

The store already holds what the parser found (meta rows, import errors) and the next run the scheduler will
create, so nothing here imports a DAG file: the answer is the system's, not a fresh local parse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from updraft.cli.output import render
from updraft.cli.system import require_dag, system

if TYPE_CHECKING:
    from updraft.config import UpdraftConfig
    from updraft.store.api import DagMeta


def dag_row(meta: DagMeta, config: UpdraftConfig) -> dict[str, Any]:
    """Airflow's ``dags list`` columns (plus tags); fileloc is where the system reads the file from."""
    location = f"s3://{config.bucket}/{config.dags_prefix}" if config.bucket else config.dags_prefix
    return {"dag_id": meta.dag_id, "fileloc": location + meta.relative_fileloc, "owners": meta.owners,
            "is_paused": meta.is_paused, "tags": sorted(meta.tags)}


def list_dags(ctx: click.Context, output: str) -> None:
    services = system(ctx)
    rows = [dag_row(meta, services.config) for meta in services.store.list_dags()]
    if services.store.list_import_errors():
        click.echo("Error: Failed to load all files. For details, run `updraft dags list-import-errors`", err=True)
    click.echo(render(rows, output))


def next_execution(ctx: click.Context, dag_id: str, n: int) -> list[str | None]:
    """The stored next run (what the scheduler creates next), then the timetable's following ones.

    A trailing None means the schedule ends there, as the local variant reports it.
    """
    from updraft.timetables._time import coerce_datetime
    from updraft.timetables.base import DataInterval
    from updraft.timetables.planning import next_dagruns

    store = system(ctx, dags=True).store
    meta = require_dag(store, dag_id)
    if meta.is_paused:
        click.echo("[INFO] Please be reminded this DAG is PAUSED now.", err=True)
    if meta.next_dagrun_logical_date is None:
        return [None]
    out: list[str | None] = [meta.next_dagrun_logical_date.isoformat()]
    if n > 1:
        sdag = store.get_serialized_dag(dag_id, meta.dag_hash)
        assert sdag is not None, "a DAG row names a stored version"
        start, end = meta.next_dagrun_data_interval_start, meta.next_dagrun_data_interval_end
        assert start is not None and end is not None, "the store writes the next run's fields together"
        last = DataInterval(coerce_datetime(start), coerce_datetime(end))
        infos = next_dagruns(sdag.timetable, start_date=sdag.start_date, end_date=sdag.end_date,
                             catchup=sdag.catchup, last_automated_data_interval=last, n=n - 1)
        out += [info.logical_date.isoformat() for info in infos]
    if len(out) < n:
        out.append(None)
    return out
