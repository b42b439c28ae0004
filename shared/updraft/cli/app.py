"""The ``updraft`` command group and the behaviour every subcommand shares.

Errors: one ``Error: ...`` line on stderr and a non-zero exit; the traceback
only with ``--verbose``, because most CLI failures (missing folder, unknown
dag_id) are the user's to fix and a traceback hides the one line that says
how. Imports of the parser and the SDK happen inside the commands so that
``updraft --help`` stays instant.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from updraft.cli.assets import assets
from updraft.cli.backfill import backfill
from updraft.cli.connections import connections
from updraft.cli.dags import dags
from updraft.cli.env import env
from updraft.cli.hitl import hitl
from updraft.cli.local import local
from updraft.cli.login import login
from updraft.cli.pools import pools
from updraft.cli.requirements import requirements
from updraft.cli.run_changes import register as register_run_changes
from updraft.cli.runs import runs
from updraft.cli.tasks import tasks
from updraft.cli.variables import variables
from updraft.parsing.options import DEFAULT_MEMORY_LIMIT_MB, DEFAULT_TIMEOUT_S, ParseOptions

if TYPE_CHECKING:
    from updraft.cli.api_client import ApiClient
    from updraft.services import Services


@dataclass
class CliConfig:
    parse_timeout: float = DEFAULT_TIMEOUT_S
    parse_memory_limit: int = DEFAULT_MEMORY_LIMIT_MB
    parse_processes: int | None = None
    verbose: bool = False
    services: Services | None = None  # the running system's Services, connected on first use (updraft.cli.system)
    api: ApiClient | None = None  # the environment's REST API client, made on first use (updraft.cli.api_client)

    def parse_options(self, plugins_folder: str | None = None) -> ParseOptions:
        return ParseOptions(
            timeout_s=self.parse_timeout,
            memory_limit_mb=self.parse_memory_limit or None,
            parallelism=self.parse_processes,
            plugins_folder=plugins_folder,
        )


class UpdraftGroup(click.Group):
    """A group that turns unexpected exceptions into one clear error line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            root = ctx.find_root()
            if root.params.get("verbose"):
                traceback.print_exc()
            hint = "" if root.params.get("verbose") else " (run with --verbose for the traceback)"
            raise click.ClickException(f"{type(exc).__name__}: {exc}{hint}") from exc


@click.group(cls=UpdraftGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--parse-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    envvar="UPDRAFT_PARSE_TIMEOUT",
    help="Seconds a DAG file may run at parse time before it is stopped (Airflow's dagbag_import_timeout).",
)
@click.option(
    "--parse-memory-limit",
    type=click.IntRange(min=0),
    default=DEFAULT_MEMORY_LIMIT_MB,
    show_default=True,
    envvar="UPDRAFT_PARSE_MEMORY_LIMIT",
    help="MiB of address space a DAG file may use at parse time (0: no limit).",
)
@click.option(
    "--parse-processes",
    type=click.IntRange(min=1),
    default=None,
    envvar="UPDRAFT_PARSE_PROCESSES",
    help="DAG files parsed at once [default: number of CPUs].",
)
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks and what DAG files printed.")
@click.option("--env", "env", default=None, envvar="UPDRAFT_ENV", metavar="NAME",
              help="The environment to operate (see `updraft env list`) [default: the one `updraft env use` "
                   "chose, else the running local mode; env: UPDRAFT_ENV].")
@click.version_option(package_name="updraft", prog_name="updraft")
@click.pass_context
def cli(ctx: click.Context, parse_timeout: float, parse_memory_limit: int, parse_processes: int | None,
        verbose: bool, env: str | None) -> None:
    """Updraft: run Apache Airflow DAG files on serverless AWS."""
    ctx.obj = CliConfig(parse_timeout, parse_memory_limit, parse_processes, verbose)


def _register_commands() -> None:
    for command in (dags, runs, tasks, pools, backfill, local, variables, connections, env, login, assets, hitl,
                    requirements):
        cli.add_command(command)
    register_run_changes()  # tasks clear|state, runs mark-success|mark-failed, dags state


_register_commands()
