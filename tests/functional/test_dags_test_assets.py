"""`updraft dags test` on Airflow 3.3.2's bundled asset examples (``airflow_asset_examples/``, unchanged from the
wheel, Apache License 2.0): producers with outlets, extras by context, yield and post_execute, aliases, the
``@asset`` decorator, ``AssetOrTimeSchedule`` and inlet events. ``example_asset_with_watchers.py`` is not here: it
needs ``FileDeleteTrigger`` (a triggerer), which Updraft refuses at import; S3 and SQS events take its place.

Each `dags test` starts from an empty environment, so ``read_asset_event_from_classic`` renders
``inlet_events.for_asset(...)[-1]`` with no events and fails on the undefined value, as Airflow's StrictUndefined
template does with no events recorded.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from updraft.local.dag_test import run_dag_test

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_dags_test_ticks")]

FOLDER = Path(__file__).parent / "airflow_asset_examples"
OK = ("success", 1)


# A few runs (each `dags test` starts a whole local system); every file's DAGs load in the test below.
@pytest.mark.parametrize("dag_id, state, tasks", [
    ("asset1_producer", "success", {"asset1_producer": OK}),
    ("asset_with_extra_by_yield", "success", {"asset_with_extra_by_yield": OK}),
    ("read_asset_event_from_classic", "failed", {"read_asset_event_from_classic": ("failed", 1)}),
])
def test_airflow_asset_examples(dag_id, state, tasks):
    result = run_dag_test(dag_id, dags_folder=str(FOLDER), logical_date=dt.datetime(2024, 3, 5, tzinfo=dt.UTC))
    assert result.run_state == state
    assert {label: (ti["state"], ti["try_number"]) for label, ti in result.tasks.items()} == tasks


def test_every_asset_example_loads():
    from updraft.runtime.loader import LocalDagLoader

    loader = LocalDagLoader(FOLDER)
    loaded = {path.name: sorted(loader.load_file(path.name)) for path in sorted(FOLDER.glob("*.py"))}
    assert loaded["example_asset_decorator.py"] == ["asset1_producer", "asset2_producer", "consumes_asset_decorator"]
    assert len(loaded["example_assets.py"]) == 10 and "conditional_asset_and_time_based_timetable" in \
        loaded["example_assets.py"]
    assert sum(map(len, loaded.values())) == 26
