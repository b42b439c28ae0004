"""What a process that forks DAG-file children imports before its first fork.

A child finds everything the warm process imported already in ``sys.modules`` instead of paying its import per
file; the fork server warms up once at start, a parser forking from its own process once per process.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

# Modules a DAG file is likely to import. They are Updraft's own modules (the SDK and its Airflow-compatible
# paths), never user code.
WARM_MODULES = (
    "pendulum",
    "updraft.sdk",
    "updraft.serialization",
    "updraft.parsing.loader",
    "airflow",
    "airflow.sdk",
    "airflow.exceptions",
    "airflow.decorators",
    "airflow.models",
    "airflow.models.dag",
    "airflow.models.baseoperator",
    "airflow.models.param",
    "airflow.utils.task_group",
    "airflow.utils.trigger_rule",
    "airflow.utils.dates",
    "airflow.operators.empty",
    "airflow.operators.bash",
    "airflow.operators.python",
    "airflow.providers.standard.operators.empty",
    "airflow.providers.standard.operators.bash",
    "airflow.providers.standard.operators.python",
    "airflow.providers.standard.sensors.time_delta",
    "airflow.providers.standard.sensors.date_time",
    "airflow.providers.standard.sensors.python",
    "airflow.timetables.base",
    "airflow.timetables.interval",
    "airflow.timetables.trigger",
    "airflow.timetables.simple",
    "airflow.timetables.events",
    "updraft.timetables.registry",
)

_warmed = False
_WARM_UP_RUNS = 10


def is_warm() -> bool:
    """Whether this process has warmed up already (it only ever needs to once)."""
    return _warmed


def warm_up(modules: Sequence[str] = WARM_MODULES) -> list[str]:
    """Import what DAG files commonly need, once, in the parent.

    Modules that do not exist (yet) are skipped: a missing compatibility path
    must show up as an import error in the DAG file that uses it, not stop the
    parser. Returns the modules that could not be imported, for diagnostics.
    """
    global _warmed
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:
            missing.append(name)
    try:
        # lazy: the task child imports only what it runs (the parse loader only for a dry-run warm-up)
        from updraft.parsing.loader import warm_up_dry_run

        # Several runs, not one: Python 3.11 specialises bytecode only after a
        # function has run a few times, and a child that specialises it writes
        # to (so copies) the code object's pages.
        for _ in range(_WARM_UP_RUNS):
            warm_up_dry_run()
    except Exception:
        missing.append("updraft.parsing.loader.warm_up_dry_run")
    _warmed = True
    return missing
