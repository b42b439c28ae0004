"""``AssetAccessControl`` as Airflow 3.3.2 has it with ``[core] multi_team`` off (its default, and the only mode
Updraft has): validated as Airflow validates it, stored with the asset in the serialized DAG (Airflow's shape,
left out when it is the default), and no effect on which DAGs an event queues; multi-team mode is refused by name."""

from __future__ import annotations

import pytest
from moto import mock_aws

from airflow.sdk import DAG, Asset, AssetAccessControl, task
from tests.functional.scheduling.harness import START, Clock, make_store, store_dags
from updraft.scheduling.asset_events import record_asset_event
from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.serialization import serialize_dag


def test_defaults_validation_and_equality_are_airflows():
    default = AssetAccessControl()
    assert (default.producer_teams, default.consumer_teams, default.allow_global) == ([], None, True)
    assert Asset("a").access_control == default and Asset("a", access_control=None) == Asset("a")
    guarded = Asset("a", access_control=AssetAccessControl(producer_teams=["t"], allow_global=False))
    assert guarded != Asset("a")  # a field of the asset, as in Airflow's attrs class
    with pytest.raises(ValueError, match="Each entry in producer_teams must be a non-empty string"):
        AssetAccessControl(producer_teams=[" "])
    with pytest.raises(ValueError, match="Each entry in consumer_teams must be a non-empty string"):
        AssetAccessControl(consumer_teams=[""])
    with pytest.raises(TypeError, match="'allow_global' must be <class 'bool'>"):
        AssetAccessControl(allow_global="no")


def _consumer(asset: Asset) -> DAG:
    with DAG("consumer", schedule=[asset], start_date=START) as dag:
        @task
        def noop():
            return None

        noop()
    return dag


@pytest.mark.slow
def test_stored_in_the_serialized_schedule_and_without_effect_on_events(serialized_moto):
    control = AssetAccessControl(producer_teams=["team_analytics"], consumer_teams=["team_ml"], allow_global=False)
    dag = _consumer(Asset("shared_data", uri="s3://data-lake/shared/output.csv", access_control=control))
    asset = serialize_dag(dag, relative_fileloc="f.py", file_hash="h")["dag"]["timetable"]["__var"]["asset_condition"]["objects"][0]
    assert asset["access_control"] == {"producer_teams": ["team_analytics"], "allow_global": False,
                                       "consumer_teams": ["team_ml"]}
    plain = serialize_dag(_consumer(Asset("shared_data")), relative_fileloc="f.py", file_hash="h")
    assert "access_control" not in plain["dag"]["timetable"]["__var"]["asset_condition"]["objects"][0]
    with mock_aws():
        store = make_store()
        clock = Clock()
        store_dags(store, dag, now=clock())
        _, queued = record_asset_event(store, name="shared_data", uri="s3://data-lake/shared/output.csv",
                                       source="a teamless producer", timestamp=clock())
        assert queued == {"consumer"}  # allow_global=False filters only in multi-team mode


def test_multi_team_mode_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("AIRFLOW__CORE__MULTI_TEAM", "True")
    with pytest.raises(UnsupportedFeatureError, match=r"\[core\] multi_team"):
        AssetAccessControl(producer_teams=["t"])
