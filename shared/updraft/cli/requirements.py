"""``--requirements``: the environment's requirements file, installed for DAG code before a command runs it, and
``updraft requirements install`` to install one ahead (for example on a machine that will later be offline).

The file defaults to ``requirements.txt`` beside the DAGs folder (MWAA's layout: ``dags/`` and
``requirements.txt`` side by side), used when present. Installing prints every line that is not installed, with
its reason; a conflict with Updraft's own packages stops the command naming the packages.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from updraft.requirements.install import Installed

Command = TypeVar("Command", bound=Callable[..., Any])


def requirements_option(func: Command) -> Command:
    return click.option(
        "--requirements", "requirements", envvar="UPDRAFT_REQUIREMENTS", default=None,
        type=click.Path(dir_okay=False),
        help="The environment's pip requirements file (providers and libraries DAG code imports), installed once "
             "into a cache for DAG code only [default: requirements.txt beside the DAGs folder, when present].",
    )(func)


def resolve_requirements(dags_folder: str, requirements: str | None) -> Path | None:
    """The explicit file (which must exist), else ``<parent of the DAGs folder>/requirements.txt`` when present."""
    if requirements:
        path = Path(requirements)
        if not path.is_file():
            raise click.BadParameter(f"no such file: {requirements}", param_hint="--requirements")
        return path.resolve()
    sibling = Path(os.path.abspath(dags_folder)).parent / "requirements.txt"
    return sibling if sibling.is_file() else None


def use_requirements(dags_folder: str, requirements: str | None) -> Installed | None:
    """Install the environment's requirements (when there are any) and make them DAG code's: in this process and
    in every process it starts (``UPDRAFT_DAG_PACKAGES``; the installed providers' metadata in
    ``UPDRAFT_PROVIDERS_INFO`` for the API)."""
    path = resolve_requirements(dags_folder, requirements)
    if path is None:
        return None
    installed = install_file(path)
    # lazy: CLI start (requirements' installer only when a requirements file is given)
    from updraft.requirements import provider_info
    from updraft.requirements.dag_packages import VAR, activate

    os.environ[VAR] = str(installed.site)
    os.environ[provider_info.VAR] = str(installed.providers_file)
    activate([str(installed.site)])
    return installed


def install_file(path: Path) -> Installed:
    """Install ``path`` (or find it in the cache), saying on stderr every line not installed and why."""
    # lazy: CLI start (requirements' installer only when a requirements file is given)
    from updraft.requirements.install import install
    from updraft.requirements.lines import RequirementsError

    try:
        installed = install(path)
    except RequirementsError as exc:
        raise click.ClickException(f"{path}: {exc}") from None
    for line in installed.not_installed:
        verb = "not installed (Updraft's own)" if line.action == "own" else "refused"
        click.echo(f"{line.source}: {line.text}: {verb}: {line.reason}", err=True)
    click.echo(f"requirements {path}: {len(installed.lock.splitlines())} packages for DAG code in {installed.site}",
               err=True)
    return installed


@click.group()
def requirements() -> None:
    """An environment's requirements (providers and libraries for DAG code)."""


@requirements.command("install")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def install_command(file: str) -> None:
    """Install FILE into the requirements cache now (what --requirements would do at the next start)."""
    installed = install_file(Path(file).resolve())
    click.echo(installed.root)
