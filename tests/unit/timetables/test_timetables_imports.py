"""Import cost is a property DAG parsing depends on: every DAG file with a custom timetable imports the base."""

from __future__ import annotations

import subprocess
import sys

import updraft.timetables


def test_base_import_does_not_load_croniter_or_schedule_families():
    code = (
        "import sys, airflow.timetables.base;"
        "heavy = [m for m in ('croniter', 'updraft.timetables.trigger', 'updraft.timetables.interval')"
        " if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_facade_names_resolve():
    for name in updraft.timetables.__all__:
        assert getattr(updraft.timetables, name) is not None
    assert sorted(updraft.timetables.__all__) == sorted(updraft.timetables._LAZY)
