"""The standard provider's branch operators and sensors, ``common.compat.sdk`` and ``@task.run_if``/``skip_if``:
import paths, argument validation with Airflow 3.3's messages, and the choices they make (issue 17)."""

from __future__ import annotations

import datetime as dt
import importlib
import json
from types import SimpleNamespace

import pendulum
import pytest

from airflow.sdk import DAG, task
from updraft.sdk.exceptions import AirflowException, AirflowSkipException, UnsupportedFeatureError

START = pendulum.datetime(2024, 1, 1, tz="UTC")


# -- import paths ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("module, name", [
    ("airflow.providers.standard.operators.latest_only", "LatestOnlyOperator"),
    ("airflow.operators.latest_only", "LatestOnlyOperator"),
    ("airflow.providers.standard.operators.datetime", "BranchDateTimeOperator"),
    ("airflow.operators.datetime", "BranchDateTimeOperator"),
    ("airflow.providers.standard.operators.weekday", "BranchDayOfWeekOperator"),
    ("airflow.operators.weekday", "BranchDayOfWeekOperator"),
    ("airflow.providers.standard.operators.branch", "BaseBranchOperator"),
    ("airflow.operators.branch", "BranchMixIn"),
    ("airflow.sdk.bases.branch", "BaseBranchOperator"),
    ("airflow.sdk", "BaseBranchOperator"),
    ("airflow.sdk", "BranchMixIn"),
    ("airflow.providers.standard.sensors.bash", "BashSensor"),
    ("airflow.sensors.bash", "BashSensor"),
    ("airflow.providers.standard.sensors.filesystem", "FileSensor"),
    ("airflow.sensors.filesystem", "FileSensor"),
    ("airflow.providers.standard.sensors.weekday", "DayOfWeekSensor"),
    ("airflow.sensors.weekday", "DayOfWeekSensor"),
    ("airflow.providers.standard.utils.weekday", "WeekDay"),
])
def test_import_paths(module, name):
    assert getattr(importlib.import_module(module), name).__module__.startswith("updraft.")


def test_airflow_2_weekday_module_names_its_new_home():
    with pytest.raises(UnsupportedFeatureError, match=r"airflow\.providers\.standard\.utils\.weekday"):
        importlib.import_module("airflow.utils.weekday")


# -- common.compat.sdk -------------------------------------------------------------------------------------------
# ``__all__`` of airflow/providers/common/compat/sdk.py in apache-airflow-providers-common-compat 1.23.0 (the
# release Airflow 3.3.2 installs).
COMPAT_SDK_ALL = [
    "Asset", "AssetAlias", "AssetAll", "AssetAny", "BaseHook", "BaseBranchOperator", "BranchMixIn", "SkipMixin",
    "BaseSensorOperator", "PokeReturnValue", "poke_mode_only", "BaseOperator", "task", "dag", "task_group",
    "setup", "teardown", "TaskDecorator", "task_decorator_factory", "get_unique_task_id", "KeywordParameters",
    "determine_kwargs", "Connection", "Variable", "XCom", "DAG", "Param", "XComArg", "DecoratedOperator",
    "DecoratedMappedOperator", "MappedOperator", "Metadata", "BaseNotifier", "AirflowPlugin", "BaseOperatorLink",
    "TaskInstanceKey", "TaskGroup", "chain", "chain_linear", "cross_downstream", "EdgeModifier", "Label",
    "DagRunState", "TaskInstanceState", "TriggerRule", "WeightRule", "ObjectStoragePath", "literal", "Context",
    "context_merge", "SET_DURING_EXECUTION", "context_to_airflow_vars", "AIRFLOW_VAR_NAME_FORMAT_MAPPING",
    "get_current_context", "get_parsing_context", "timeout", "XCOM_RETURN_KEY", "HookLineageCollector",
    "HookLineageReader", "get_hook_lineage_collector", "HookLineage", "NoOpCollector", "AirflowException",
    "AirflowFailException", "AirflowNotFoundException", "AirflowOptionalProviderFeatureException",
    "AirflowSkipException", "AirflowTaskTimeout", "AirflowSensorTimeout", "ParamValidationError", "TaskDeferred",
    "XComNotFound", "Stats", "redact", "mask_secret", "hookimpl", "get_listener_manager", "conf",
    "AirflowConfigException", "ResumableJobMixin", "DownstreamTasksSkipped", "DagRunTriggerException",
    "AssetLineageInfo", "ChainRetryPolicy", "ExceptionRetryPolicy", "RetryAction", "RetryDecision", "RetryPolicy",
    "RetryRule", "timezone", "io",
]


@pytest.mark.parametrize("name", COMPAT_SDK_ALL)
def test_compat_sdk_name_is_reexported_or_refused_by_name(name):
    compat = importlib.import_module("airflow.providers.common.compat.sdk")
    try:
        value = getattr(compat, name)
    except UnsupportedFeatureError as err:
        assert f"airflow.providers.common.compat.sdk.{name}" in str(err)
        return
    assert value is not None


def test_compat_sdk_reexports_the_sdk_objects():
    from airflow.providers.common.compat import sdk as compat
    from airflow.sdk import DAG as SdkDag
    from airflow.sdk import TriggerRule, timezone
    from updraft.operators.branch import BaseBranchOperator

    assert compat.DAG is SdkDag and compat.TriggerRule is TriggerRule and compat.timezone is timezone
    assert compat.BaseBranchOperator is BaseBranchOperator
    assert compat.XCOM_RETURN_KEY == "return_value"


def test_other_common_compat_modules_need_the_real_provider():
    with pytest.raises(UnsupportedFeatureError, match=r"add apache-airflow-providers-common-compat to the "
                                                      r"environment's requirements"):
        importlib.import_module("airflow.providers.common.compat.standard.operators")


# -- WeekDay and the day-of-week operator and sensor ------------------------------------------------------------
def test_weekday_validation():
    from airflow.providers.standard.utils.weekday import WeekDay

    assert WeekDay.validate_week_day("monday") == {1}
    assert WeekDay.validate_week_day({"Saturday", WeekDay.SUNDAY}) == {6, 7}
    assert WeekDay.validate_week_day(WeekDay.FRIDAY) == {5}
    assert WeekDay.validate_week_day(["tuesday", "TUESDAY"]) == {2}
    with pytest.raises(AttributeError, match='Invalid Week Day passed: "Funday"'):
        WeekDay.validate_week_day("Funday")
    with pytest.raises(TypeError, match="Unsupported Type for week_day parameter"):
        WeekDay.validate_week_day(5)


def test_day_of_week_arguments_are_validated_at_parse_time():
    from airflow.providers.standard.operators.weekday import BranchDayOfWeekOperator
    from airflow.providers.standard.sensors.weekday import DayOfWeekSensor

    with DAG("d", schedule=None, start_date=START):
        with pytest.raises(AttributeError, match="Invalid Week Day"):
            BranchDayOfWeekOperator(task_id="b", week_day="Someday", follow_task_ids_if_true="a",
                                    follow_task_ids_if_false="c")
        with pytest.raises(AttributeError, match="Invalid Week Day"):
            DayOfWeekSensor(task_id="s", week_day={"Monday", "Blursday"})


def _context(**fields):
    return {"logical_date": None, "dag_run": SimpleNamespace(run_after=None), **fields}


def test_day_of_week_branch_uses_logical_date_then_run_after():
    from airflow.providers.standard.operators.weekday import BranchDayOfWeekOperator

    with DAG("d", schedule=None, start_date=START):
        op = BranchDayOfWeekOperator(task_id="b", week_day="Tuesday", use_task_logical_date=True,
                                     follow_task_ids_if_true="yes", follow_task_ids_if_false="no")
    tuesday, wednesday = pendulum.datetime(2024, 3, 5), pendulum.datetime(2024, 3, 6)
    assert op.choose_branch(_context(logical_date=tuesday)) == "yes"
    assert op.choose_branch(_context(logical_date=wednesday)) == "no"
    assert op.choose_branch(_context(dag_run=SimpleNamespace(run_after=tuesday))) == "yes"


def test_day_of_week_sensor_needs_a_date_with_use_task_logical_date():
    from airflow.providers.standard.sensors.weekday import DayOfWeekSensor

    sensor = DayOfWeekSensor(task_id="s", week_day="Tuesday", use_task_logical_date=True)
    assert sensor.poke(_context(logical_date=pendulum.datetime(2024, 3, 5))) is True
    with pytest.raises(ValueError, match="Either `logical_date` or `run_after`"):
        sensor.poke(_context())


# -- BranchDateTimeOperator -------------------------------------------------------------------------------------
def test_datetime_branch_needs_a_bound():
    from airflow.providers.standard.operators.datetime import BranchDateTimeOperator

    with pytest.raises(AirflowException, match="Both target_upper and target_lower are None"):
        BranchDateTimeOperator(task_id="b", follow_task_ids_if_true="a", follow_task_ids_if_false="c",
                               target_lower=None, target_upper=None)


def test_target_times_as_dates():
    from airflow.providers.standard.operators.datetime import target_times_as_dates

    base = dt.datetime(2024, 3, 5, 12)
    assert target_times_as_dates(base, dt.time(9), dt.time(17)) == (dt.datetime(2024, 3, 5, 9),
                                                                   dt.datetime(2024, 3, 5, 17))
    # Upper before lower: the window ends the next day.
    assert target_times_as_dates(base, dt.time(22), dt.time(2)) == (dt.datetime(2024, 3, 5, 22),
                                                                   dt.datetime(2024, 3, 6, 2))
    assert target_times_as_dates(base, None, dt.time(2)) == (None, dt.datetime(2024, 3, 5, 2))


@pytest.mark.parametrize("lower, upper, expected", [
    (dt.time(0), dt.time(1), "yes"),                           # 00:00 is inside [00:00, 01:00]
    (dt.datetime(2024, 3, 5, 1), None, "no"),                   # lower bound after the date
    (None, dt.datetime(2024, 3, 4), "no"),                      # upper bound before the date
    (dt.datetime(2024, 3, 4, 23, tzinfo=dt.timezone(dt.timedelta(hours=-2))), None, "no"),  # 03-05 01:00 UTC
])
def test_datetime_branch_with_logical_date(lower, upper, expected):
    from airflow.providers.standard.operators.datetime import BranchDateTimeOperator

    with DAG("d", schedule=None, start_date=START):
        op = BranchDateTimeOperator(task_id="b", use_task_logical_date=True, target_lower=lower, target_upper=upper,
                                    follow_task_ids_if_true="yes", follow_task_ids_if_false="no")
    assert op.choose_branch(_context(logical_date=pendulum.datetime(2024, 3, 5))) == expected


# -- LatestOnlyOperator -----------------------------------------------------------------------------------------
def _latest_only(**dag_kwargs):
    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.providers.standard.operators.latest_only import LatestOnlyOperator

    with DAG("latest", schedule=dt.timedelta(hours=4), start_date=START, **dag_kwargs):
        latest = LatestOnlyOperator(task_id="latest")
        latest >> [EmptyOperator(task_id="a"), EmptyOperator(task_id="b")]
    return latest


def _scheduled_run(start, end, run_type="scheduled"):
    return SimpleNamespace(run_type=run_type, logical_date=start, run_after=end, data_interval_start=start,
                           data_interval_end=end)


@pytest.mark.parametrize("now, followed", [
    (pendulum.datetime(2024, 1, 2, 12, 30), ["a", "b"]),   # the run for [08:00, 12:00) is the latest
    (pendulum.datetime(2024, 1, 2, 16), ["a", "b"]),       # up to the end of the next interval, inclusive
    (pendulum.datetime(2024, 1, 2, 16, 0, 1), []),         # a newer interval has ended: skip downstream
    (pendulum.datetime(2024, 1, 2, 8), []),                # before the run's own interval started
])
def test_latest_only_scheduled_run(now, followed, monkeypatch):
    op = _latest_only()
    run = _scheduled_run(pendulum.datetime(2024, 1, 2, 8), pendulum.datetime(2024, 1, 2, 12))
    monkeypatch.setattr(pendulum, "now", lambda tz=None: now)
    assert sorted(op.choose_branch({"dag_run": run})) == followed


def test_latest_only_manual_run_always_follows():
    op = _latest_only()
    run = _scheduled_run(pendulum.datetime(2022, 1, 1), pendulum.datetime(2022, 1, 1, 4), run_type="manual")
    assert sorted(op.choose_branch({"dag_run": run})) == ["a", "b"]


def test_latest_only_follows_when_the_timetable_has_no_next_run(monkeypatch):
    """Airflow asks for the next run without the DAG's end_date: only a timetable with none (``@once``) says
    "last scheduled execution"."""
    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.providers.standard.operators.latest_only import LatestOnlyOperator

    with DAG("once", schedule="@once", start_date=START):
        op = LatestOnlyOperator(task_id="latest")
        op >> EmptyOperator(task_id="a")
    monkeypatch.setattr(pendulum, "now", lambda tz=None: pendulum.datetime(2025, 1, 1))
    assert op.choose_branch({"dag_run": _scheduled_run(START, START)}) == ["a"]
    # With an end_date the next interval still counts: an old run is not the latest.
    op = _latest_only(end_date=pendulum.datetime(2024, 1, 2, 9))
    assert op.choose_branch({"dag_run": _scheduled_run(pendulum.datetime(2024, 1, 2, 4),
                                                       pendulum.datetime(2024, 1, 2, 8))}) == []


def test_branch_operators_can_skip_downstream_in_the_serialized_dag():
    from updraft.serialization import deserialize_dag, serialize_dag

    op = _latest_only()
    sdag = deserialize_dag(serialize_dag(op.dag, relative_fileloc="latest.py", file_hash="h"))
    assert sdag.task_dict["latest"].can_skip_downstream is True


# -- sensors -----------------------------------------------------------------------------------------------------
def test_file_sensor_defaults_and_start_from_trigger_refused():
    from airflow.providers.standard.sensors.filesystem import FileSensor

    sensor = FileSensor(task_id="f", filepath="data/{{ ds }}.csv")
    assert (sensor.fs_conn_id, sensor.recursive, sensor.deferrable) == ("fs_default", False, False)
    assert FileSensor.template_fields == ("filepath", "fs_conn_id")
    assert FileSensor(task_id="g", filepath="x", deferrable=True).deferrable  # a polling trigger (issue 16)
    with pytest.raises(UnsupportedFeatureError,
                       match=r"FileSensor\(start_from_trigger=True\).*for the time triggers only; use deferrable=True"):
        FileSensor(task_id="h", filepath="x", start_from_trigger=True)


def test_file_sensor_joins_the_connection_path(tmp_path, monkeypatch):
    from airflow.providers.standard.sensors.filesystem import FileSensor

    monkeypatch.setenv("AIRFLOW_CONN_FS_DEFAULT", json.dumps({"conn_type": "fs", "extra": {"path": str(tmp_path)}}))
    sensor = FileSensor(task_id="f", filepath="*.csv")
    assert sensor.path == f"{tmp_path}/*.csv" and sensor.poke({}) is False
    (tmp_path / "a.csv").write_text("x")
    assert sensor.poke({}) is True


def test_bash_sensor_exit_codes():
    from airflow.providers.standard.sensors.bash import BashSensor
    from updraft.sdk.exceptions import AirflowFailException

    assert BashSensor.template_fields == ("bash_command", "env")
    assert BashSensor(task_id="ok", bash_command="exit 0").poke({}) is True
    assert BashSensor(task_id="again", bash_command="exit 1").poke({}) is False
    assert BashSensor(task_id="retry", bash_command="exit 7", retry_exit_code=7).poke({}) is False
    with pytest.raises(AirflowFailException, match="return code 8"):
        BashSensor(task_id="fail", bash_command="exit 8", retry_exit_code=7).poke({})


# -- @task.run_if / @task.skip_if ----------------------------------------------------------------------------------
def test_run_if_and_skip_if_need_a_task():
    with pytest.raises(TypeError, match=r"run_if can only be used with task\. decorate with @task before @run_if\."):
        task.run_if(lambda context: True)(lambda: None)
    with pytest.raises(TypeError, match="skip_if can only be used with task"):
        task.skip_if(lambda context: True)(lambda: None)


def test_conditions_become_pre_execute_hooks_run_after_an_existing_one():
    calls = []
    with DAG("d", schedule=None, start_date=START) as dag:
        @task.skip_if(lambda context: (context["n"] > 1, None))
        @task(pre_execute=lambda context: calls.append("own"))
        def work():
            return 1

        work()
    hook = dag.task_dict["work"]._pre_execute_hook
    hook({"n": 1})
    assert calls == ["own"]
    with pytest.raises(AirflowSkipException, match=r"Task was skipped due to condition\."):
        hook({"n": 2})
    assert calls == ["own", "own"]
