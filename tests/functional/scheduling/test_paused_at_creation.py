"""Airflow's ``[core] dags_are_paused_at_creation`` as an environment setting: where a DAG is first registered."""

from __future__ import annotations

import datetime as dt

from updraft.config import UpdraftConfig
from updraft.model.parse_results import ParsedFile
from updraft.scheduling.commands.dag_registration import register_parsed_file, set_paused
from updraft.serialization import serialize_dag

NOW = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)


def _register(store, dag_id: str, *, paused_at_creation: bool, upon_creation: bool | None = None):
    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.sdk import DAG

    kwargs = {} if upon_creation is None else {"is_paused_upon_creation": upon_creation}
    with DAG(dag_id, schedule=None, start_date=NOW, **kwargs) as dag:
        EmptyOperator(task_id="only")
    doc = serialize_dag(dag, relative_fileloc=f"{dag_id}.py", file_hash="h")
    register_parsed_file(store, ParsedFile(relative_path=f"{dag_id}.py", file_hash="h", dags=[doc]), now=NOW,
                         paused_at_creation=paused_at_creation)
    return store.get_dag_meta(dag_id).is_paused


def test_a_new_dag_starts_as_the_setting_or_its_file_says_and_only_then(env):
    store = env[0]
    cases = {  # (setting, the file's is_paused_upon_creation) -> paused
        (True, None): True, (False, None): False,  # the environment decides for a file that does not say
        (False, True): True, (True, False): False,  # a DAG's is_paused_upon_creation wins, as in Airflow
    }
    for i, ((setting, upon_creation), paused) in enumerate(cases.items()):
        assert _register(store, f"d{i}", paused_at_creation=setting, upon_creation=upon_creation) is paused
    set_paused(store, "d1", True)
    assert _register(store, "d1", paused_at_creation=False) is True  # a re-parse keeps the user's choice


def test_the_setting_travels_in_the_environment():
    assert UpdraftConfig().to_env().get("UPDRAFT_DAGS_PAUSED_AT_CREATION") is None  # Airflow's default: paused
    unpaused = UpdraftConfig(dags_are_paused_at_creation=False)
    assert UpdraftConfig.from_env(unpaused.to_env()).dags_are_paused_at_creation is False
    assert UpdraftConfig.from_env({}).dags_are_paused_at_creation is True
