"""Assets end to end on moto: a producer's success emits its outlets' events (with extra), the consumer's
condition turns them into exactly one asset-triggered run, and its tasks read inlet and triggering events."""

from __future__ import annotations

import textwrap

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import HEADER, RuntimeEnv
from updraft.store.assets import asset_id_of

BODY = """
from airflow.sdk import Asset, AssetAlias, Metadata
raw = Asset(uri="s3://bucket/raw.csv", name="raw")
other = Asset("other")

with DAG("producer", schedule=None, start_date=START):
    @task(outlets=[raw])
    def make(*, outlet_events=None):
        outlet_events[raw].extra = {"rows": 3}

    make()

with DAG("other_producer", schedule=None, start_date=START):
    @task(outlets=[other, AssetAlias("al")])
    def make_other(*, outlet_events=None):
        yield Metadata(other, {"by": "yield"})
        outlet_events[AssetAlias("al")].add(Asset("dynamic"), extra={"via": "alias"})

    make_other()

with DAG("consumer", schedule=raw & (other | Asset("never")), start_date=START):
    @task(inlets=[raw])
    def read(*, inlet_events=None, triggering_asset_events=None):
        events = triggering_asset_events[raw]
        return {"inlet": inlet_events[raw][-1].extra, "count": len(inlet_events[raw]),
                "triggering": sorted(a.name for a in triggering_asset_events),
                "first_extra": events[0].extra, "source": events[0].source_dag_id}

    read()

with DAG("alias_consumer", schedule=AssetAlias("al"), start_date=START):
    @task
    def got(*, triggering_asset_events=None):
        return [e.extra for e in triggering_asset_events[AssetAlias("al")]]

    got()
"""


@pytest.fixture
def env(tmp_path):
    with mock_aws():
        yield RuntimeEnv(tmp_path)


def _add_all(env, tmp_path, name, body):
    """Every DAG of one file, stored as the parser would."""
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / f"{name}.py").write_text(HEADER + textwrap.dedent(body))
    env.add_folder(folder)


def _asset_runs(env, dag_id):
    return [r for r in env.store.list_runs(dag_id) if r.run_type == "asset_triggered"]


@pytest.mark.slow
def test_producer_success_triggers_consumer_once_with_events(env, tmp_path):
    _add_all(env, tmp_path, "assets_flow", BODY)
    assert {a.name for a in env.store.list_assets()} >= {"raw", "other", "never"}
    raw = env.store.get_asset(asset_id_of("raw"))
    assert raw.consumers == ["consumer"] and raw.producers == ["producer.make"]

    run = env.run("producer")
    assert run.state == "success"
    events = env.store.list_asset_events(asset_id_of("raw"))
    assert [e.extra for e in events] == [{"rows": 3}]
    assert not _asset_runs(env, "consumer")  # raw alone does not meet raw & (other | never)

    env.run("other_producer")
    env.scheduler.run_pass()
    env.drain()
    runs = _asset_runs(env, "consumer")
    assert len(runs) == 1 and runs[0].logical_date is None
    result = env.xcom("consumer", runs[0].run_id, "read")
    assert result == {"inlet": {"rows": 3}, "count": 1, "triggering": ["other", "raw"],
                      "first_extra": {"rows": 3}, "source": "producer"}
    assert [e.extra for e in env.store.list_asset_events(asset_id_of("other"))] == [{"by": "yield"}]
    alias_runs = _asset_runs(env, "alias_consumer")
    assert len(alias_runs) == 1
    assert env.xcom("alias_consumer", alias_runs[0].run_id, "got") == [{"via": "alias"}]
    for _ in range(3):  # nothing more is queued: more passes create nothing
        env.scheduler.run_pass()
    assert len(_asset_runs(env, "consumer")) == 1
    assert env.store.queued_targets("consumer") == []


def test_a_redelivered_dispatch_emits_what_a_crashed_worker_did_not(env, tmp_path, monkeypatch):
    import updraft.runtime.worker as worker

    _add_all(env, tmp_path, "assets_flow", BODY)
    run = env.trigger("producer")
    env.scheduler.run_pass()
    [dispatch] = env.executor.take()
    real = worker.publish_and_nudge
    monkeypatch.setattr(worker, "publish_and_nudge", lambda *a, **k: [])  # the worker stops after the success
    assert worker.handle_dispatch(dispatch, store=env.store, loader=env.loader, scheduler=env.scheduler,
                                  now_fn=env.clock) is not None
    assert env.ti("producer", run.run_id, "make").state == "success"
    assert env.store.list_asset_events(asset_id_of("raw")) == []
    monkeypatch.setattr(worker, "publish_and_nudge", real)
    for _ in range(2):  # Lambda delivers the dispatch again (twice): the events are emitted once
        assert worker.handle_dispatch(dispatch, store=env.store, loader=env.loader, scheduler=env.scheduler,
                                      now_fn=env.clock) is None
    assert [e.extra for e in env.store.list_asset_events(asset_id_of("raw"))] == [{"rows": 3}]
    assert [t.target for t in env.store.queued_targets("consumer")] == ["asset:raw"]
