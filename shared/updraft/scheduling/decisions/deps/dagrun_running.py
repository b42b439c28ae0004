"""Airflow's ``DagrunRunningDep``: only a running run schedules its tasks (queued runs wait for max_active_runs).

The scheduler also leaves a run alone while its logical date is in the future, as Airflow's ``_schedule_dag_run``
does, so a manual run triggered for a later date waits instead of running early.
"""

from __future__ import annotations

import datetime as dt

from updraft.model.records import DagRun
from updraft.model.states import DagRunState
from updraft.scheduling.decisions.deps.base import DepStatus, failing, passing

NAME = "Dagrun Running"


def dagrun_running_status(run: DagRun, now: dt.datetime) -> DepStatus:
    if run.state != DagRunState.RUNNING:
        return failing(NAME, f"Task instance's dagrun was not in the 'running' state but in the state "
                             f"'{run.state}'.")
    if run.logical_date is not None and run.logical_date > now:
        return failing(NAME, f"The run's logical date {run.logical_date.isoformat()} is in the future.")
    return passing(NAME, "The dagrun is running.")
