"""Custom priority weight strategies (``weight_rule=``): registered by a plugin, evaluated at parse time per try
number, as Airflow's ``get_weight(ti)`` would be at instance creation (try 0) and on clear (the current try)."""

from __future__ import annotations

import pytest

import updraft.plugins
from airflow.plugins_manager import AirflowPlugin
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from airflow.task.priority_strategy import PriorityWeightStrategy
from updraft.model.records import TaskInstance
from updraft.model.states import TaskInstanceState
from updraft.scheduling.decisions.clearing import reset_of
from updraft.serialization import deserialize_dag, serialize_dag


class Decreasing(PriorityWeightStrategy):
    def get_weight(self, ti):
        return max(3 - (ti.try_number or 0) + 1, 1)


class ReadsRunId(PriorityWeightStrategy):
    def get_weight(self, ti):
        return len(ti.run_id)


class Unregistered(PriorityWeightStrategy):
    def get_weight(self, ti):
        return 1


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(updraft.plugins, "_plugins", dict(updraft.plugins._plugins))

    class StrategiesPlugin(AirflowPlugin):
        name = "test_priority_strategies"
        priority_weight_strategies = [Decreasing, ReadsRunId]


PATH = f"{__name__}.Decreasing"


def _serialized(**task_kwargs):
    with DAG("weights", schedule=None) as dag:
        start = EmptyOperator(task_id="start")
        start >> EmptyOperator(task_id="custom", retries=3, **task_kwargs)
        start >> EmptyOperator(task_id="plain", priority_weight=2)
    return deserialize_dag(serialize_dag(dag, relative_fileloc="weights.py", file_hash="h"))


@pytest.mark.parametrize("rule", [Decreasing(), PATH], ids=["instance", "class path"])
def test_weights_evaluated_per_try_at_parse_time(rule):
    dag = _serialized(weight_rule=rule)
    custom = dag.task_dict["custom"]
    assert custom.weight_rule == PATH  # what Airflow serializes and its REST API shows
    assert custom.effective_priority_weight == 4  # a new instance: try number 0
    assert custom.weights_by_try[:5] == [4, 3, 2, 1, 1]
    assert custom.weight_at_try(100) == 1
    # Airflow's downstream rule sums the downstream tasks' own weights, a custom one's included.
    assert dag.task_dict["start"].effective_priority_weight == 1 + 1 + 2


def test_a_clear_takes_the_weight_of_the_current_try():
    custom = _serialized(weight_rule=Decreasing()).task_dict["custom"]
    failed = TaskInstance("weights", "r", "custom", state=TaskInstanceState.FAILED, try_number=2, priority_weight=3)
    assert reset_of(failed, custom).fields["priority_weight"] == 2
    plain = _serialized().task_dict["plain"]
    assert "priority_weight" not in reset_of(failed, plain).fields  # built-in rules never change on clear


def test_builtin_strategies_are_their_weight_rules():
    from airflow.task.priority_strategy import _AbsolutePriorityWeightStrategy

    with DAG("d"):
        assert EmptyOperator(task_id="t", weight_rule=_AbsolutePriorityWeightStrategy()).weight_rule == "absolute"


def test_an_unregistered_strategy_is_refused_as_in_airflow():
    with DAG("d"), pytest.raises(ValueError, match=f"Unknown priority strategy {__name__}.Unregistered"):
        EmptyOperator(task_id="t", weight_rule=Unregistered())


def test_reading_what_exists_only_on_a_real_task_instance_fails_the_parse():
    with pytest.raises(AttributeError, match=r"reads ti\.run_id: Updraft evaluates custom priority weight"):
        _serialized(weight_rule=ReadsRunId())
