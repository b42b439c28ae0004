"""``updraft dags trigger|pause|unpause|upload``: the ``dags`` commands that change the running system.

They join the ``dags`` group (``updraft.cli.dags``) but live here because none of them parses a local folder:
they go through :func:`updraft.cli.system.system`, the one seam to the system.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from updraft.cli.options import BadValue, check_run_id, conf_option, iso, output_option, parse_conf, parse_date
from updraft.cli.output import render
from updraft.cli.system import now, system

if TYPE_CHECKING:
    from updraft.model.records import DagRun
    from updraft.store.dynamo import DynamoStore


def run_row(run: DagRun) -> dict[str, Any]:
    """A DAG run as Airflow's ``dags trigger`` prints it."""
    return {"conf": run.conf, "dag_id": run.dag_id, "dag_run_id": run.run_id,
            "data_interval_start": iso(run.data_interval_start), "data_interval_end": iso(run.data_interval_end),
            "end_date": iso(run.end_date), "logical_date": iso(run.logical_date), "run_after": iso(run.run_after),
            "run_type": run.run_type, "start_date": iso(run.start_date), "state": run.state.value}


@click.command("trigger")
@click.argument("dag_id")
@conf_option
@click.option("--run-id", "-r", default=None, help="The run's id [default: manual__<logical date>].")
@click.option("--logical-date", "-l", default=None, help="The run's logical date [default: now].")
@click.option("--wait", is_flag=True,
              help="Follow the run's task states until it finishes; exit 0 when it succeeded, 1 when it failed.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="With --wait: stop waiting after this many seconds, exit 3 (the run goes on).")
@click.option("--poll-interval", type=click.FloatRange(min=0.01), default=0.5, hidden=True)
@output_option
@click.pass_context
def trigger(ctx: click.Context, dag_id: str, conf: str | None, run_id: str | None, logical_date: str | None,
            wait: bool, timeout: float | None, poll_interval: float, output: str) -> None:
    """Trigger a manual run of DAG_ID (conf is validated against the DAG's params).

    With --wait, exit 0 when the run succeeded, 1 when it failed, 3 when --timeout ran out first.
    """
    from updraft.scheduling.triggering import trigger_dag
    from updraft.sdk.exceptions import AirflowException

    conf_dict = parse_conf(conf)
    run_id = check_run_id(run_id)
    when = parse_date(logical_date, "--logical-date")
    services = system(ctx, dags=True)
    store = services.store
    try:
        run = trigger_dag(store, dag_id, now=now(), conf=conf_dict, logical_date=when, run_id=run_id)
    except AirflowException as err:  # DagNotFound, ParamValidationError, DagRunAlreadyExists
        raise click.ClickException(str(err)) from None
    try:
        services.nudge_scheduler(dag_id, run.run_id)
    except Exception as err:  # only a speed-up: the run exists, and failing now would invite a duplicate trigger
        click.echo(f"[WARN] could not nudge the scheduler ({type(err).__name__}: {err}); "
                   "the run starts at its next tick", err=True)
    meta = store.get_dag_meta(dag_id)
    if meta is not None and meta.is_paused:
        click.echo(f"[WARN] DAG {dag_id} is paused: the run waits until `updraft dags unpause {dag_id}`.", err=True)
    human = output != "json"
    if human or not wait:
        click.echo(render([run_row(run)], output))
    if not wait:
        return
    _follow(ctx, store, run, human=human, output=output, poll_interval=poll_interval, timeout=timeout)


def _follow(ctx: click.Context, store: DynamoStore, run: DagRun, *, human: bool, output: str, poll_interval: float,
            timeout: float | None) -> None:
    import sys
    import time

    from updraft.cli.progress import WaitTimeout, wait_for_run

    started = time.monotonic()
    # JSON keeps stdout for the result; the progress then goes to stderr.
    stream = sys.stdout if human else sys.stderr
    try:
        final = wait_for_run(store, run.dag_id, run.run_id, stream=stream, poll_interval=poll_interval,
                             timeout=timeout)
    except WaitTimeout as err:
        click.echo(f"Error: stopped waiting: {err}", err=True)
        ctx.exit(3)
    except KeyboardInterrupt:
        click.echo(f"\nStopped waiting; the run goes on (`updraft tasks states {run.dag_id} {run.run_id}`).",
                   err=True)
        ctx.exit(130)
    if final is None:
        raise click.ClickException(f"DAG run {run.run_id} of {run.dag_id} disappeared while waiting")
    if human:
        click.echo(f"DAG run {final.run_id}: {final.state.value} in {time.monotonic() - started:.2f} s")
    else:
        click.echo(render([run_row(final)], output))
    ctx.exit(0 if final.state.value == "success" else 1)


def _set_paused(ctx: click.Context, dag_id: str, paused: bool, output: str) -> None:
    from updraft.scheduling.dag_registration import set_paused

    store = system(ctx, dags=not paused).store  # unpausing may recompute the next run from the timetable
    if not set_paused(store, dag_id, paused, now=None if paused else now()):
        raise click.ClickException(f"Dag with dag_id: '{dag_id}' not found")
    click.echo(render([{"dag_id": dag_id, "is_paused": paused}], output))


@click.command("pause")
@click.argument("dag_id")
@output_option
@click.pass_context
def pause(ctx: click.Context, dag_id: str, output: str) -> None:
    """Pause DAG_ID: no new runs are created or examined; running tries finish."""
    _set_paused(ctx, dag_id, True, output)


@click.command("unpause")
@click.argument("dag_id")
@output_option
@click.pass_context
def unpause(ctx: click.Context, dag_id: str, output: str) -> None:
    """Resume DAG_ID (a catchup=False DAG's next run moves up to now, as in Airflow)."""
    _set_paused(ctx, dag_id, False, output)


def _files(paths: tuple[str, ...]) -> list[tuple[Path, str]]:
    """(file, name under the DAGs prefix): a file by its name, a folder's files by their path inside it."""
    out: list[tuple[Path, str]] = []
    for given in paths:
        path = Path(given)
        if path.is_file():
            out.append((path, path.name))
            continue
        for found in sorted(path.rglob("*")):
            rel = found.relative_to(path)
            if found.is_file() and not any(p.startswith(".") or p == "__pycache__" for p in rel.parts):
                out.append((found, rel.as_posix()))
    return out


@click.command("upload")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=True))
@click.option("--dest", default="", help="Subfolder of the DAGs folder to put them in.")
@click.pass_context
def upload(ctx: click.Context, files: tuple[str, ...], dest: str) -> None:
    """Put DAG files (or folders of them) into the system's DAGs folder; the parser picks them up from there."""
    services = system(ctx)
    config = services.config
    if not config.bucket:
        raise click.ClickException("the system has no bucket configured (UPDRAFT_BUCKET)")
    prefix = config.dags_prefix + (dest.strip("/") + "/" if dest.strip("/") else "")
    if ".." in prefix.split("/"):
        raise BadValue("--dest must stay inside the DAGs folder")
    s3 = services.client("s3")
    for path, name in _files(files):
        key = prefix + name
        s3.put_object(Bucket=config.bucket, Key=key, Body=path.read_bytes())
        click.echo(f"Uploaded {path} -> s3://{config.bucket}/{key}")
