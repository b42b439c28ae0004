"""``updraft local``: start the whole system on this machine, in the foreground, until Ctrl-C."""

from __future__ import annotations

import signal

import click

from updraft.cli.dags import resolve_plugins_folder
from updraft.cli.requirements import requirements_option, use_requirements


def _interrupt(signum: int, frame: object) -> None:
    """SIGINT (Ctrl-C) and SIGTERM (``kill``, a container stop) both stop cleanly.

    Installed for both explicitly: a process inherits its signals' dispositions, and Python installs its own
    SIGINT handler only when SIGINT was not inherited ignored, as it is in a background job of a non-interactive
    shell (``updraft local &`` in a script, a test runner's job); such a system would otherwise ignore SIGINT.
    """
    raise KeyboardInterrupt


@click.command("local")
@click.option("--dags-folder", "-S", "dags_folder", envvar="UPDRAFT_DAGS_FOLDER", default="dags", show_default=True,
              type=click.Path(exists=True, file_okay=False, dir_okay=True),
              help="DAGs folder to sync to the embedded bucket [env: UPDRAFT_DAGS_FOLDER].")
@click.option("--plugins-folder", envvar="UPDRAFT_PLUGINS_FOLDER", default=None,
              type=click.Path(exists=True, file_okay=False, dir_okay=True),
              help="Airflow plugins folder [default: a 'plugins' folder beside the DAGs folder, if any].")
@click.option("--state-dir", envvar="UPDRAFT_STATE_DIR", default=None, type=click.Path(file_okay=False),
              help="Keep the table and the bucket here across restarts [default: nothing is kept].")
@click.option("--tick-seconds", envvar="UPDRAFT_TICK_SECONDS", default=5.0, show_default=True,
              type=click.FloatRange(min=0.1), help="How often the scheduler ticks (EventBridge's rate on AWS).")
@click.option("--workers", envvar="UPDRAFT_LOCAL_WORKERS", default=4, show_default=True, type=click.IntRange(min=1),
              help="Worker processes: how many Lambda tasks run at once, and the most tries claimed at once.")
@click.option("--parallelism", envvar="UPDRAFT_PARALLELISM", default=None, type=click.IntRange(min=1),
              help="Airflow's [core] parallelism: tries claimed at once in total, at most --workers (as Airflow's "
                   "LocalExecutor runs exactly parallelism processes) [default: --workers].")
@click.option("--compute-niceness", envvar="UPDRAFT_LOCAL_COMPUTE_NICENESS", default=10, show_default=True,
              type=click.IntRange(min=0, max=19),
              help="How much lower than local mode's own process (the embedded AWS, the scheduler, the API) the "
                   "workers, Fargate tasks and their tries run (Unix niceness): the embedded AWS answers first, as "
                   "AWS's services never share a worker's CPU. 0: at the same priority.")
@click.option("--port", envvar="UPDRAFT_LOCAL_PORT", default=0, type=click.IntRange(min=0, max=65535),
              help="Port of the embedded AWS [default: any free port; printed at start].")
@click.option("--api-port", envvar="UPDRAFT_LOCAL_API_PORT", default=0, type=click.IntRange(min=0, max=65535),
              help="Port of the REST API (API Gateway's part) [default: any free port; printed at start].")
@click.option("--grace-period", default=5.0, show_default=True, type=click.FloatRange(min=0),
              help="Seconds a stop waits for running tries before releasing them to be retried.")
@click.option("--unpause", is_flag=True, envvar="UPDRAFT_UNPAUSE_NEW_DAGS",
              help="Unpause each DAG the first time it is parsed (Airflow's dags_are_paused_at_creation=False), "
                   "so scheduled DAGs start running on their schedules.")
@click.option("--users", envvar="UPDRAFT_LOCAL_USERS", default=None, metavar="NAME:ROLE,...",
              help="Turn users and roles on (Airflow's simple_auth_manager_users, e.g. 'alice:VIEWER,bob:OP'): the "
                   "API then needs a token from POST /auth/token [default: every caller is admin].")
@click.option("--passwords-file", envvar="UPDRAFT_LOCAL_PASSWORDS_FILE", default=None, type=click.Path(dir_okay=False),
              help="The users' passwords, JSON {name: password}; missing ones are generated into it and printed "
                   "[default: $UPDRAFT_HOME/local_passwords.json].")
@requirements_option
@click.pass_context
def local(ctx: click.Context, dags_folder: str, plugins_folder: str | None, state_dir: str | None,
          tick_seconds: float, workers: int, parallelism: int | None, compute_niceness: int, port: int, api_port: int,
          grace_period: float,
          unpause: bool, users: str | None, passwords_file: str | None, requirements: str | None) -> None:
    """Run Updraft on this machine: embedded AWS, parser, scheduler and workers, as deployed.

    Edits to the DAGs folder are picked up within a second. Stop with Ctrl-C: running tries get
    --grace-period seconds, then are released to be retried (or failed) as Airflow would.
    """
    # lazy: CLI start (local mode's moto server, scheduler and workers only for `updraft local`)
    from updraft.local.system import LocalOptions, LocalSystem
    from updraft.local.workers import start_resource_tracker

    if parallelism is not None and parallelism > workers:
        click.echo(f"Warning: --parallelism {parallelism} exceeds --workers {workers}: local mode claims at most "
                   f"{workers} tries at once, one per worker, so that tries start in priority order.", err=True)
    options = LocalOptions(dags_folder=dags_folder, plugins_folder=resolve_plugins_folder(dags_folder, plugins_folder),
                           state_dir=state_dir, tick_seconds=tick_seconds, workers=workers, parallelism=parallelism,
                           compute_niceness=compute_niceness, port=port, api_port=api_port, grace_seconds=grace_period,
                           verbose=ctx.find_root().obj.verbose, unpause_new_dags=unpause, users=users,
                           passwords_file=passwords_file)
    if users:
        # lazy: CLI start (users import the API's auth roles; only with --users)
        from updraft.local.users import parse_users

        try:
            parse_users(users)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--users") from None
    use_requirements(dags_folder, requirements)  # before any process starts: they inherit the DAG packages
    start_resource_tracker()  # before any thread: see its docstring
    system = LocalSystem(options, say=click.echo)
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    system.start()
    try:
        system.serve_forever()
    except KeyboardInterrupt:
        click.echo("\nstopping (Ctrl-C again is ignored while tries are released and the state is saved)...")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        report = system.stop()
        left = f"; {len(report.orphans)} unfinished tries released for the next start" if report.orphans else ""
        click.echo(f"stopped{left}")

