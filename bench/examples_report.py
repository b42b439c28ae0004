"""Airflow 3.3.2's own example DAG files through Updraft: does each load, and how does `updraft dags test` end?

usage: python bench/examples_report.py [--airflow /tmp/af_surf/x/airflow] [--timeout 60] [--no-run] [--dags a,b]

Every ``*.py`` in apache-airflow-core's ``example_dags/`` and the standard provider's ``example_dags/`` is parsed
(one folder parse: loads / import error and its reason), then each DAG that loaded gets one ``dags test`` run (its
own folder holding just its file and the examples' support folders) whose run state is compared with Airflow's
where it is known: ``AIRFLOW_STATES`` holds the states checked against real Airflow 3.3.2 (the reference run,
/work/shared/notes/airflow-reference-run.md; the same tables the tests under tests/functional use). Prints a
markdown table and the counts (bench/README.md keeps the last counts).
"""

from __future__ import annotations

import argparse
import datetime as dt
import multiprocessing
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

LOGICAL_DATE = dt.datetime(2024, 3, 5, tzinfo=dt.UTC)  # a Tuesday, as the functional tests

# Run states real Airflow 3.3.2's `airflow dags test <dag> 2024-03-05` ended with (checked 2026-11-24).
AIRFLOW_STATES: dict[str, str] = {
    "example_bash_decorator": "success",
    "example_failed_dag": "failed",  # its task raises, by design
    "example_branch_datetime_operator": "success",
    "example_branch_datetime_operator_2": "success",
    "example_branch_datetime_operator_3": "success",
    "example_weekday_branch_operator": "success",
    "example_dynamic_task_mapping": "success",
    "example_dynamic_task_mapping_with_no_taskflow_operators": "success",
    "latest_only": "success",
    "latest_only_with_trigger": "success",
    "example_setup_teardown": "success",
    "example_setup_teardown_taskflow": "success",
    "example_short_circuit_decorator": "success",
    "example_short_circuit_operator": "success",
    # also_run_this renders {{ params.foo }} with no foo: jinja2 UndefinedError, in Airflow as here (without -c)
    "example_passing_params_via_test_command": "failed",
    # Virtualenv and external-Python tasks: their venvs install colorama, numpy, funcsigs and dill from PyPI.
    "example_python_operator": "success",
    "example_python_decorator": "success",
    "example_branch_operator": "success",
    "example_branch_python_operator_decorator": "success",
    "tutorial_taskflow_api_virtualenv": "success",
    # AIP-103 state stores. They start in 2026: at LOGICAL_DATE (2024) no task runs and every run succeeds, in
    # Airflow 3.3.2 as here (reference run 2026-11-24). Without a logical date (`dags test <dag_id>`), both end as
    # Airflow does: run_job succeeds on try 2 (it reattaches to try 1's job id); the async one fails on all 3
    # tries (3.3.2's task accessor has no aget: AttributeError); the mapped and asset ones succeed on try 1.
    "example_task_state_store": "success",
    "example_task_state_store_async": "success",
    "example_task_state_store_mapped": "success",
    "example_asset_state_store_producer": "success",
    "example_asset_state_store_consumer": "success",
    # get_air_quality_data imports pandas and fetches over HTTP: offline (or without pandas) it fails, try 1;
    # analyze is upstream_failed (Airflow 3.3.2's dags test, 2026-11-24)
    "tutorial_objectstorage": "failed",
    # AssetAccessControl is stored and, without [core] multi_team, changes nothing (produce/consume: try 1)
    "team_analytics_producer": "success",
    "team_ml_consumer": "success",
    # example_asset_with_watchers.py: test_task succeeds at try 1 (dags test starts no watcher, in Airflow as here)
    "example_asset_with_watchers": "success",
    # example_asset_partition.py: each DAG's one task succeeds at try 1 (a manual run has no partition key)
    "aggregate_regional_sales": "success",
    "clean_and_combine_player_stats": "success",
    "compute_player_odds": "success",
    "daily_inference": "success",
    "daily_team_a_rollup": "success",
    "ingest_region_stats": "success",
    "ingest_regional_sales": "success",
    "ingest_team_a_player_stats": "success",
    "live_region_player_stats": "success",
    "monthly_team_a_rollup": "success",
    "multi_region_player_stats": "success",
    "player_odds_quality_check_wont_ever_to_trigger": "success",
    "regional_stats_breakdown": "success",
    "scatter_live_region_to_segments": "success",
    "segment_region_stats_early_rollup": "success",
    "segment_region_stats_rollup": "success",
    "summarize_live_region_stats": "success",
    "team_b_player_stats": "success",
    "team_c_player_stats": "success",
    "trailing_week_inference": "success",
    "train_weekly_model": "success",
    # Airflow's dags test waits for a response (none can come) and applies no response timeout: it never ends.
    "example_hitl_operator": "no end: waits for Human-in-the-loop input",
    # Airflow with the two example plugins registered from its plugins folder: every task success at try 1
    # (priority weights start 5, task_1 4, task_2 4, task_non_custom 2; run_this 1), as here.
    "example_custom_weight": "success",
    "example_workday_timetable": "success",
    # The rest checked 2026-11-25 00:05-00:30 UTC, each file alone in its dags folder (as this report runs them),
    # run, task states and try numbers read from Airflow's DB; every task at try 1 unless said.
    "asset_alias_example_alias_consumer": "success",
    "asset_alias_example_alias_producer": "success",
    "asset_s3_bucket_consumer": "success",
    "asset_s3_bucket_producer": "success",
    "asset_alias_example_alias_consumer_with_no_taskflow": "success",
    "asset_alias_example_alias_producer_with_no_taskflow": "success",
    "asset_s3_bucket_consumer_with_no_taskflow": "success",
    "asset_s3_bucket_producer_with_no_taskflow": "success",
    "asset1_producer": "success",
    "asset2_producer": "success",
    "consumes_asset_decorator": "success",
    "asset_consumes_1": "success",
    "asset_consumes_1_and_2": "success",
    "asset_consumes_1_never_scheduled": "success",
    "asset_consumes_unknown_never_scheduled": "success",
    "asset_produces_1": "success",
    "asset_produces_2": "success",
    "conditional_asset_and_time_based_timetable": "success",
    "consume_1_and_2_with_asset_expressions": "success",
    "consume_1_or_2_with_asset_expressions": "success",
    "consume_1_or_both_2_and_3_with_asset_expressions": "success",
    "example_bash_operator": "success",
    "example_branch_labels": "success",
    "example_branch_dop_operator_v3": "success",
    "example_complex": "success",
    # get_ip fetches httpbin.org: offline it fails (httpx.ConnectError), try 1; the other two upstream_failed
    "example_dag_decorator": "failed",
    "example_display_name": "success",
    "example_task_group_mapping": "success",
    "example_task_mapping_second_order": "success",
    "child_dag": "success",
    "example_external_task_marker_parent": "success",
    "read_asset_event": "success",
    # reads an asset event an empty environment does not have: the task fails, try 1
    "read_asset_event_from_classic": "failed",
    "example_measurement_correction_decorator": "success",
    "example_measurement_correction_operator": "success",
    "example_nested_branch_dag": "success",
    "asset_with_extra_by_context": "success",
    "asset_with_extra_by_yield": "success",
    "asset_with_extra_from_classic_operator": "success",
    "example_params_trigger_ui": "success",
    # no run at all: its required_field param has no default (ParamValidationError), as here without -c
    "example_params_ui_tutorial": "no run: required param without a value",
    "example_sensor_decorator": "success",
    "example_simplest_dag": "success",
    "example_skip_dag": "success",
    "example_task_group": "success",
    "example_task_group_decorator": "success",
    "example_time_delta_sensor_async": "success",
    # TriggerDagRunOperator: example_trigger_target_dag is not in its lone folder ("Dag ... not found"), try 1
    "example_trigger_controller_dag": "failed",
    "example_trigger_target_dag": "success",
    "example_xcom": "success",
    "example_xcom_args": "success",
    "example_xcom_args_with_operators": "success",
    "tutorial": "success",
    "tutorial_dag": "success",
    "tutorial_taskflow_api": "success",
    "tutorial_taskflow_templates": "success",
    # The ones without an end within 120 s (run/task states in the DB at the kill):
    # trigger_child_task fails (child_dag is in another file: "Dag ... not found"), try 1; dags test then runs the
    # deferred parent_task_sensor's trigger in line, waiting for child_dag forever (the row reads queued, try 1).
    "example_external_task": "no end: parent_task_sensor waits for child_dag (deferred, no timeout)",
    # child_task1 (reschedule mode, timeout 600 s) pokes for a parent run that does not exist every 60 s of real
    # time: up_for_reschedule, try 1 at 120 s; run for 700 s, it times out (AirflowSensorTimeout) and fails at 659 s
    "example_external_task_marker_child": "failed",
    # requests' ConnectionError is no builtin ConnectionError: the policy falls through to the task's own retries
    # (5, 60 s apart): up_for_retry try 2 at 120 s; run for 420 s, it fails on try 6 after 346 s
    "example_retry_policy": "failed",
    # dags test runs timeout_after_second_date_in_the_future_async's trigger in line until its target time (an
    # hour on): at 120 s that task is queued, Sensor_succeeds success, 11 scheduled (try 1, not yet run).
    # wait_for_file (`airflow tasks test`) fails: "The conn_id `fs_default` isn't defined", as here.
    "example_sensors": "no end: waits an hour for a deferred TimeSensor",
}


def _stage(airflow: Path, target: Path) -> None:
    """Copy both example folders into ``target``; their support folders (libs, sql, plugins) come along."""
    for folder in (airflow / "example_dags", airflow / "providers" / "standard" / "example_dags"):
        shutil.copytree(folder, target, dirs_exist_ok=True)


class _Table:
    """The report's markdown rows, printed as they come (a slow run must not hide the ones before it)."""

    def __init__(self) -> None:
        print("| file | loads | dag / import error | dags test run state | Airflow's run state |")
        print("|---|---|---|---|---|", flush=True)

    def append(self, row: tuple[str, str, str, str, str]) -> None:
        print("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |", flush=True)


def _dags_test(dag_id: str, folder: Path, timeout: float, out: Any) -> None:
    from updraft.local import dag_test

    dag_test.TICK_S = 0.2
    try:
        result = dag_test.run_dag_test(dag_id, dags_folder=str(folder), logical_date=LOGICAL_DATE, timeout_s=timeout)
        out.put((result.run_state, result.run_state))
    except Exception as error:  # the report records every failure and goes on
        out.put(("error", f"error: {_reason(str(error))}"))


def _run_alone(dag_id: str, folder: Path, timeout: float) -> tuple[str, str]:
    """One ``dags test`` in a child process, killed after ``timeout`` (a stuck sensor must not stop the report)."""
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_dags_test, args=(dag_id, folder, timeout, out))
    started = time.perf_counter()
    child.start()
    child.join(timeout + 10)
    if child.is_alive():
        child.kill()
        child.join()
        return "timeout", f"no end within {timeout:.0f} s"
    run_state, text = out.get() if not out.empty() else ("error", "the child died")
    return run_state, f"{text} ({time.perf_counter() - started:.0f} s)"


def _reason(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    last = (lines[-1] if lines else text).strip()
    return last.split("Updraft does not support ", 1)[-1].split("Error: ", 1)[-1][:140]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--airflow", default="/tmp/af_surf/x/airflow")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--no-run", action="store_true")
    parser.add_argument("--dags", default="", help="run only these DAG ids (comma-separated); every file still loads")
    args = parser.parse_args()

    from updraft.parsing import ParseOptions, parse_dags_folder

    airflow = Path(args.airflow)
    only = {d for d in args.dags.split(",") if d}
    work = Path(tempfile.mkdtemp(prefix="updraft-examples-"))
    every = work / "all"
    _stage(airflow, every)
    parsed = parse_dags_folder(str(every), ParseOptions())
    rows = _Table()
    counts: Counter[str] = Counter()
    for parsed_file in sorted(parsed.files, key=lambda f: f.relative_path):
        name = parsed_file.relative_path
        if parsed_file.import_errors:
            counts["import error"] += 1
            rows.append((name, "import error", _reason(parsed_file.import_errors[0].stacktrace), "", ""))
            continue
        if not parsed_file.dag_ids:
            counts["no DAG"] += 1
            rows.append((name, "loads (no DAG)", "", "", ""))
            continue
        counts["loads"] += 1
        for dag_id in sorted(parsed_file.dag_ids):
            state, expected = "", AIRFLOW_STATES.get(dag_id, "not compared")
            if not args.no_run and (not only or dag_id in only):
                alone = work / dag_id
                shutil.copytree(every, alone)
                for other in alone.glob("*.py"):  # this DAG's file alone, beside the support folders
                    if other.name not in (Path(name).name, "__init__.py"):
                        other.unlink()
                run_state, state = _run_alone(dag_id, alone, args.timeout)
                counts[f"run {run_state}"] += 1
                if expected != "not compared" and run_state in ("success", "failed"):
                    counts["matches Airflow" if run_state == expected else "differs from Airflow"] += 1
            rows.append((name, "loads", dag_id, state, expected))
    print()
    print(f"files: {len(parsed.files)}; " + "; ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
