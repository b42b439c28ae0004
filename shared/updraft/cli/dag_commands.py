"""``updraft dags trigger|pause|unpause|upload``: the ``dags`` commands that change an environment.

They join the ``dags`` group (``updraft.cli.dags``) but live here because none of them parses a local folder:
``trigger``, ``pause`` and ``unpause`` go through the environment's REST API (:func:`updraft.cli.api_client.api`),
``upload`` writes to its bucket.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from updraft.cli.api_client import ApiCallFailed, api, path_of
from updraft.cli.dag_files import dags_bucket
from updraft.cli.options import BadValue, check_run_id, conf_option, output_option, parse_conf, parse_date
from updraft.cli.output import render
from updraft.cli.progress import ApiRunSource, WaitTimeout, wait_for_run
from updraft.cli.remote import dag_not_found, get_dag, get_run, run_row
from updraft.model.states import DagRunState


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
    conf_dict = parse_conf(conf)
    run_id = check_run_id(run_id)
    when = parse_date(logical_date, "--logical-date")
    client = api(ctx)
    body: dict[str, Any] = {"logical_date": when.isoformat() if when is not None else None}
    if run_id is not None:
        body["dag_run_id"] = run_id
    if conf_dict is not None:
        body["conf"] = conf_dict
    try:
        run = client.post(path_of("dags", dag_id, "dagRuns"), body)
    except ApiCallFailed as err:  # unknown DAG, params the conf fails, a run id already used
        raise dag_not_found(dag_id) if err.status == 404 else err from None
    if get_dag(client, dag_id)["is_paused"]:
        click.echo(f"[WARN] DAG {dag_id} is paused: the run waits until `updraft dags unpause {dag_id}`.", err=True)
    human = output != "json"
    if human or not wait:
        click.echo(render([run_row(run)], output))
    if not wait:
        return
    _follow(ctx, dag_id, run["dag_run_id"], human=human, output=output, poll_interval=poll_interval,
            timeout=timeout)


def _follow(ctx: click.Context, dag_id: str, run_id: str, *, human: bool, output: str, poll_interval: float,
            timeout: float | None) -> None:
    import sys
    import time

    started = time.monotonic()
    # JSON keeps stdout for the result; the progress then goes to stderr.
    stream = sys.stdout if human else sys.stderr
    try:
        final = wait_for_run(ApiRunSource(api(ctx)), dag_id, run_id, stream=stream, poll_interval=poll_interval,
                             timeout=timeout)
    except WaitTimeout as err:
        click.echo(f"Error: stopped waiting: {err}", err=True)
        ctx.exit(3)
    except KeyboardInterrupt:
        click.echo(f"\nStopped waiting; the run goes on (`updraft tasks states {dag_id} {run_id}`).", err=True)
        ctx.exit(130)
    if final is None:
        raise click.ClickException(f"DAG run {run_id} of {dag_id} disappeared while waiting")
    if human:
        click.echo(f"DAG run {final.run_id}: {final.state.value} in {time.monotonic() - started:.2f} s")
    else:
        click.echo(render([run_row(get_run(api(ctx), dag_id, run_id))], output))
    ctx.exit(0 if final.state == DagRunState.SUCCESS else 1)


def _set_paused(ctx: click.Context, dag_id: str, paused: bool, output: str) -> None:
    """Airflow's ``PATCH /dags/{dag_id}`` (unpausing moves a catchup=False DAG's next run up to now)."""
    try:
        dag = api(ctx).patch(path_of("dags", dag_id), {"is_paused": paused}, update_mask="is_paused")
    except ApiCallFailed as err:
        raise dag_not_found(dag_id) if err.status == 404 else err from None
    click.echo(render([{"dag_id": dag_id, "is_paused": dag["is_paused"]}], output))


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
    """Put DAG files (or folders of them) into the environment's DAGs folder; its parser picks them up from
    there. A deployed environment's bucket is written with your own AWS credentials."""
    sub = dest.strip("/")
    if ".." in sub.split("/"):
        raise BadValue("--dest must stay inside the DAGs folder")
    target = dags_bucket(ctx)
    prefix = target.prefix + (sub + "/" if sub else "")
    for path, name in _files(files):
        key = prefix + name
        target.s3.put_object(Bucket=target.bucket, Key=key, Body=path.read_bytes())
        click.echo(f"Uploaded {path} -> s3://{target.bucket}/{key}")
