"""The one seam between commands and the system they manage.

Every command that reads or changes a running system asks :func:`system` for its ``Services`` (store, S3
client, log sink, scheduler nudge) and never connects itself. Today that is the local system started by
``updraft local`` (found through ``$UPDRAFT_HOME/local.json``); a deployed environment reached through its API
will plug in here without touching the commands.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from updraft.model.records import DagRun
    from updraft.services import Services
    from updraft.store.api import DagMeta
    from updraft.store.dynamo import DynamoStore


def system(ctx: click.Context, *, dags: bool = False) -> Services:
    """The running system's Services, connected once per invocation; a one-line error when none runs.

    ``dags=True`` for commands that read serialized DAGs (their timetables, params, tasks): the system's
    plugins are loaded first, because a custom timetable decodes only where its plugin is registered.
    """
    config = ctx.find_root().obj
    services: Services | None = getattr(config, "services", None)
    if services is None:
        from updraft.local.endpoint import NotRunning, connect

        try:
            services = config.services = connect()
        except NotRunning as err:
            raise click.ClickException(str(err)) from None
    if dags:
        services.load_plugins()
    return services


def running(ctx: click.Context) -> bool:
    """Whether a system answers (commands that can also work offline ask before choosing)."""
    try:
        system(ctx)
    except click.ClickException:
        return False
    return True


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def require_dag(store: DynamoStore, dag_id: str) -> DagMeta:
    """The DAG's meta row, or Airflow's one-line "not found" error."""
    meta = store.get_dag_meta(dag_id)
    if meta is None:
        raise click.ClickException(f"Dag with dag_id: '{dag_id}' not found")
    return meta


def require_run(store: DynamoStore, dag_id: str, run_id: str) -> DagRun:
    require_dag(store, dag_id)
    run = store.get_run(dag_id, run_id)
    if run is None:
        raise click.ClickException(f"DagRun with dag_id: '{dag_id}' and run_id: '{run_id}' not found")
    return run
