"""Options and argument parsing shared by several commands, so each flag means the same everywhere."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

from updraft.cli.output import OUTPUT_FORMATS
from updraft.model.identifiers import run_id_problem

Command = TypeVar("Command", bound=Callable[..., Any])


def output_option(func: Command) -> Command:
    """Airflow's ``-o/--output table|json|plain``."""
    return click.option(
        "--output",
        "-o",
        type=click.Choice(OUTPUT_FORMATS),
        default="table",
        show_default=True,
        help="Output format.",
    )(func)


def conf_option(func: Command) -> Command:
    return click.option("--conf", "-c", default=None,
                        help="JSON object for the run's conf (validated against the DAG's params).")(func)


class BadValue(click.ClickException):
    """A malformed option value: exit 2 like a usage error, but only the one line that says what is wrong
    (click's usage block would push it off a narrow terminal)."""

    exit_code = 2


def parse_conf(conf: str | None) -> dict[str, Any] | None:
    """``--conf`` as a dict; one line and exit 2 when it is not a JSON object."""
    if not conf:
        return None
    try:
        value = json.loads(conf)
    except json.JSONDecodeError as err:
        raise BadValue(f"--conf is not valid JSON: {err}") from None
    if not isinstance(value, dict):
        raise BadValue("--conf must be a JSON object")
    return value


def check_run_id(value: str | None, what: str = "--run-id") -> str | None:
    """A run id as Airflow accepts it (``updraft.model.identifiers``), or one line and exit 2 saying why not."""
    if value is not None and (problem := run_id_problem(value)) is not None:
        raise BadValue(f"{what}: {problem}")
    return value


def parse_date(value: str | None, what: str = "LOGICAL_DATE") -> dt.datetime | None:
    """An aware datetime (naive input is UTC, as Airflow reads it), or a usage error naming the argument."""
    if value is None:
        return None
    import pendulum

    try:
        parsed = pendulum.parse(value, tz="UTC")
    except (ValueError, pendulum.parsing.exceptions.ParserError) as err:
        raise BadValue(f"{what} {value!r} is not a date: {err}") from None
    if not isinstance(parsed, dt.datetime):
        raise BadValue(f"{what} {value!r} is not a date and time")
    return parsed


def iso(value: dt.datetime | None) -> str | None:
    """Dates as Airflow's CLI prints them (ISO 8601 with offset); None stays None (``None`` in tables)."""
    return value.isoformat() if value is not None else None


def clock() -> str:
    """Wall-clock prefix of progress lines."""
    return dt.datetime.now().strftime("%H:%M:%S")
