"""`updraft dags test` of a DAG with deferrable waits: the waits are skipped, each skip said, and the run ends at
once with Airflow's states (the deferral ASL on the local engine, the real worker code)."""

from __future__ import annotations

import datetime as dt
import re
import textwrap
import time

import pytest
from click.testing import CliRunner

from updraft.cli.app import cli

pytestmark = pytest.mark.slow

DAG_FILE = """\
import datetime
from airflow.sdk import DAG, task
from airflow.providers.standard.sensors.date_time import DateTimeSensorAsync
from airflow.providers.standard.sensors.time_delta import TimeDeltaSensor

with DAG("waits", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)):
    ten_minutes = DateTimeSensorAsync(
        task_id="ten_minutes", target_time="{{ (dag_run.run_after + macros.timedelta(minutes=10)).isoformat() }}")
    an_hour_after_the_run = TimeDeltaSensor(task_id="an_hour_after_the_run", delta=datetime.timedelta(hours=1),
                                            deferrable=True)

    @task
    def after():
        return "done"

    [ten_minutes, an_hour_after_the_run] >> after()
"""


def test_dags_test_skips_deferred_waits_and_says_so(tmp_path, fast_dags_test_ticks):
    (tmp_path / "waits.py").write_text(textwrap.dedent(DAG_FILE))
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["dags", "test", "waits", "--dags-folder", str(tmp_path)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started < 600  # not sat through: the shorter wait alone is 10 minutes
    skipped = [line for line in result.output.splitlines() if "skipped (--real-waits" in line]
    assert len(skipped) == 2, result.output
    # Each skip names what was left of its wait when the try deferred: the wait less the (loaded) machine's time
    # from the run's start to the deferral, so a minute's slack, never a wait the DAG did not ask for.
    assert dt.timedelta(minutes=9) < _wait_of("ten_minutes", skipped) <= dt.timedelta(minutes=10)
    assert dt.timedelta(minutes=59) < _wait_of("an_hour_after_the_run", skipped) <= dt.timedelta(hours=1)
    assert "ten_minutes" in result.output and "deferred" in result.output
    assert "DAG run manual__" in result.output and ": success in" in result.output


def _wait_of(task_id: str, lines: list[str]) -> dt.timedelta:
    found = [m for line in lines if (m := re.match(rf"{task_id}: deferred; its wait of (\d+):(\d\d):(\d\d)", line))]
    assert len(found) == 1, lines
    hours, minutes, seconds = (int(g) for g in found[0].groups())
    return dt.timedelta(hours=hours, minutes=minutes, seconds=seconds)
