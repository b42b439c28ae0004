"""TriggerDagRunOperator, ExternalTaskSensor and ExternalTaskMarker: import paths, the arguments Airflow 3.3's
standard provider validates (with its messages), what the scheduler gets from serialization, and the
``run_after`` Updraft refuses rather than ignores (issues 16, 17)."""

from __future__ import annotations

import datetime as dt
import importlib

import pytest

from airflow.sdk import DAG
from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.serialization.from_dag import build_serialized_dag

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


@pytest.mark.parametrize(("module", "name"), [
    ("airflow.providers.standard.operators.trigger_dagrun", "TriggerDagRunOperator"),
    ("airflow.providers.standard.operators.trigger_dagrun", "DagIsPaused"),
    ("airflow.operators.trigger_dagrun", "TriggerDagRunOperator"),
    ("airflow.providers.standard.sensors.external_task", "ExternalTaskSensor"),
    ("airflow.providers.standard.sensors.external_task", "ExternalTaskMarker"),
    ("airflow.sensors.external_task", "ExternalTaskSensor"),
    ("airflow.sensors.external_task", "ExternalTaskMarker"),
    ("airflow.providers.standard.triggers.external_task", "DagStateTrigger"),
    ("airflow.providers.standard.triggers.external_task", "WorkflowTrigger"),
    ("airflow.providers.standard.exceptions", "ExternalDagFailedError"),
    ("airflow.providers.standard.exceptions", "DuplicateStateError"),
])
def test_import_paths(module, name):
    assert getattr(importlib.import_module(module), name).__module__.startswith("updraft.")


def test_trigger_dagrun_arguments():
    from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator

    op = TriggerDagRunOperator(task_id="t", trigger_dag_id="x", allowed_states=["success", "failed"],
                               failed_states=[])
    assert [s.value for s in op.allowed_states] == ["success", "failed"]
    assert op.failed_states == []
    default = TriggerDagRunOperator(task_id="d", trigger_dag_id="x")
    assert ([s.value for s in default.allowed_states], [s.value for s in default.failed_states]) == (
        ["success"], ["failed"])
    assert default.poke_interval == 60 and not default.deferrable
    with pytest.raises(ValueError, match="'nope' is not a valid DagRunState"):
        TriggerDagRunOperator(task_id="bad", trigger_dag_id="x", allowed_states=["nope"])
    with pytest.raises(UnsupportedFeatureError, match=r"TriggerDagRunOperator\(run_after=...\)"):
        TriggerDagRunOperator(task_id="later", trigger_dag_id="x", run_after="2024-01-01")
    assert set(TriggerDagRunOperator.template_fields) == {
        "trigger_dag_id", "trigger_run_id", "logical_date", "conf", "wait_for_completion", "skip_when_already_exists"}


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"external_task_id": "a", "external_task_ids": ["b"]}, "Only one of `external_task_id` or `external_task_ids`"),
    ({"external_task_ids": ["a"], "external_task_group_id": "g"}, "Only one of `external_task_group_id`"),
    ({"allowed_states": ["upstream_failed"]}, "when `external_task_id` and `external_task_group_id` is `None`"),
    ({"external_task_id": "a", "allowed_states": ["queued!"]}, "when `external_task_id` or `external_task_ids`"),
    ({"execution_delta": dt.timedelta(days=1), "execution_date_fn": lambda d: d},
     "Only one of `execution_delta` or `execution_date_fn`"),
])
def test_external_task_sensor_validation(kwargs, error):
    from airflow.providers.standard.sensors.external_task import ExternalTaskSensor

    with pytest.raises(ValueError, match=error.replace("(", r"\(")):
        ExternalTaskSensor(task_id="s", external_dag_id="other", **kwargs)


def test_external_task_sensor_defaults_and_single_task_id():
    from airflow.providers.standard.exceptions import DuplicateStateError
    from airflow.providers.standard.sensors.external_task import ExternalTaskSensor

    with pytest.raises(DuplicateStateError, match="Duplicate values provided"):
        ExternalTaskSensor(task_id="s", external_dag_id="other", allowed_states=["success"], failed_states=["success"])

    sensor = ExternalTaskSensor(task_id="s", external_dag_id="other", external_task_id="t")
    assert sensor.external_task_ids == ["t"]
    assert (sensor.allowed_states, sensor.skipped_states, sensor.failed_states) == (["success"], [], [])
    with pytest.warns(DeprecationWarning, match="poll_interval"):
        assert ExternalTaskSensor(task_id="p", external_dag_id="other", poll_interval=7).poke_interval == 7


def test_marker_serializes_what_the_clear_follows():
    from airflow.providers.standard.sensors.external_task import ExternalTaskMarker

    with pytest.raises(ValueError, match="recursion_depth should be a positive integer"):
        ExternalTaskMarker(task_id="m", external_dag_id="d", external_task_id="t", recursion_depth=0)
    with pytest.raises(TypeError, match=r"Expected str or datetime\.datetime type for logical_date"):
        ExternalTaskMarker(task_id="m", external_dag_id="d", external_task_id="t", logical_date=None)
    with DAG("marked", schedule=None, start_date=START) as dag:
        ExternalTaskMarker(task_id="m", external_dag_id="d", external_task_id="t", recursion_depth=4)
    task = build_serialized_dag(dag, relative_fileloc="marked.py", file_hash="h").task_dict["m"]
    assert task.task_type == "ExternalTaskMarker" and task.is_empty
    assert task.extra == {"recursion_depth": 4}
    assert task.template_values == {"external_dag_id": "d", "external_task_id": "t",
                                    "logical_date": "{{ logical_date.isoformat() }}"}
