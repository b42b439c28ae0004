"""The task and asset state stores in real runs: tries run in a child that reaches the store only through the
worker's proxy. A retry sees the keys an earlier try kept (Airflow's reattach pattern) but not one whose retention
ran out on the worker's clock, asset state outlives runs, and task code that forges another task instance's key
through the proxy is refused. (Mapped instances keeping apart: test_airflow_examples runs Airflow's mapped example;
the store's and the proxy's unit tests check the partitions and the refusals.)"""

from __future__ import annotations

import datetime as dt
import os

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv
from updraft.model.records import TIKey

DAG_FILE = """
from airflow.sdk import Asset
from airflow.sdk.execution_time.context import NEVER_EXPIRE

ORDERS = Asset(name="orders/daily", uri="s3://warehouse/orders/daily")

with DAG("state_stores", schedule=None, start_date=START):

    @task(retries=1, retry_delay=datetime.timedelta(seconds=10))
    def reattach(task_state_store=None, ti=None):
        job_id = task_state_store.get("job_id")
        if job_id is None:
            task_state_store.set("job_id", f"job-of-try-{ti.try_number}", retention=NEVER_EXPIRE)
            task_state_store.set("heartbeat", "try 1", retention=datetime.timedelta(seconds=5))
            raise RuntimeError("lost the worker after submitting")
        return {"job_id": job_id, "heartbeat": task_state_store.get("heartbeat", default="expired")}

    @task(inlets=[ORDERS], outlets=[ORDERS])
    def produce(asset_state_store=None, task_state_store=None, ti=None):
        from updraft.model.records import TIKey

        state = asset_state_store[ORDERS]
        state.set("total_runs", state.get("total_runs", default=0) + 1)
        proxy = task_state_store._store  # what task code could reach: the proxy, fenced by the worker
        other = TIKey(ti.dag_id, ti.run_id, "reattach", -1)
        refused = []
        for attempt in (lambda: proxy.get_task_state(other, "job_id"),
                        lambda: proxy.set_task_state(other, "job_id", "hijacked", expires_at=None),
                        lambda: proxy.set_asset_state("someone_elses_asset", "k", 1)):
            try:
                attempt()
            except PermissionError as refusal:
                refused.append(type(refusal).__name__)
        return {"total_runs": asset_state_store.get("total_runs"), "refused": refused}

    reattach()
    produce()
"""

NEXT_FILE = """
from airflow.sdk import Asset

ORDERS = Asset(name="orders/daily", uri="s3://warehouse/orders/daily")

with DAG("state_stores_next", schedule=None, start_date=START):

    @task(inlets=[ORDERS], outlets=[ORDERS])
    def produce_again(asset_state_store=None, task_state_store=None):
        task_state_store.set("progress", "all done")  # cleared once the success is recorded (clear_on_success)
        asset_state_store.set("total_runs", asset_state_store.get("total_runs") + 1)
        return asset_state_store.get("total_runs")

    produce_again()
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with mock_aws():
        env = RuntimeEnv(tmp_path_factory.mktemp("state_stores"))
        env.add("state_stores", DAG_FILE)
        env.add("state_stores_next", NEXT_FILE)
        yield env


@pytest.fixture(scope="module")
def runs(env):
    first = env.run("state_stores", tick=dt.timedelta(seconds=11))
    os.environ["AIRFLOW__STATE_STORE__CLEAR_ON_SUCCESS"] = "True"  # the worker reads it (off by default)
    try:
        return [first, env.run("state_stores_next")]
    finally:
        del os.environ["AIRFLOW__STATE_STORE__CLEAR_ON_SUCCESS"]


def test_a_retry_reattaches_to_what_the_first_try_kept_and_expired_keys_are_gone(env, runs):
    first = runs[0]
    assert first.state == "success"
    assert env.ti("state_stores", first.run_id, "reattach").try_number == 2
    # The 5 s heartbeat expired on the worker's clock (11 s later); the NEVER_EXPIRE job id did not.
    assert env.xcom("state_stores", first.run_id, "reattach") == {"job_id": "job-of-try-1", "heartbeat": "expired"}
    entry = env.store.get_task_state(TIKey("state_stores", first.run_id, "reattach", -1), "job_id", now=env.clock())
    assert entry.value == "job-of-try-1" and entry.expires_at is None
    # Another run's instance of the task starts empty: task state is per run.
    assert env.store.get_task_state(TIKey("state_stores", "another_run", "reattach", -1), "job_id",
                                    now=env.clock()) is None


def test_asset_state_outlives_the_run_that_wrote_it(env, runs):
    assert env.xcom("state_stores", runs[0].run_id, "produce")["total_runs"] == 1
    assert runs[1].state == "success" and env.xcom("state_stores_next", runs[1].run_id, "produce_again") == 2
    entry = env.store.get_asset_state("orders/daily", "total_runs")
    assert entry.last_updated_by == {"kind": "task", "dag_id": "state_stores_next", "run_id": runs[1].run_id,
                                     "task_id": "produce_again", "map_index": -1}


def test_task_code_forging_another_scope_through_the_proxy_is_refused(env, runs):
    assert env.xcom("state_stores", runs[0].run_id, "produce")["refused"] == ["ScopeError"] * 3
    assert env.store.get_task_state(TIKey("state_stores", runs[0].run_id, "reattach", -1), "job_id",
                                    now=env.clock()).value == "job-of-try-1"


def test_clear_on_success_leaves_a_succeeded_instance_no_task_state(env, runs):
    """``[state_store] clear_on_success``: off, the first run's succeeded instance kept its keys (above); on, the
    second run's has none left, its asset state untouched."""
    assert env.store.list_task_state(TIKey("state_stores_next", runs[1].run_id, "produce_again", -1),
                                     now=env.clock()) == []
