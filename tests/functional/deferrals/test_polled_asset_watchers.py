"""Polled asset watchers (``AssetWatcher`` with ``FileDeleteTrigger`` or a user's event trigger) on the deferral
state machine's own ASL (local engine, fake clock): a watcher runs while a DAG scheduled on its asset is unpaused,
each file that appears is one asset event (the file deleted) and one run of the listening DAG, and the loop keeps
watching. One world for the module; the tests run in order (pause, then unpause)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from moto import mock_aws

from tests.functional.deferrals.defer_harness import DeferralEnv
from tests.functional.runtime.rt_harness import HEADER
from updraft.model.asset_watches import PolledWatch, is_watch_execution
from updraft.runtime.asset_watch import RENEW_AFTER
from updraft.runtime.trigger_check import check
from updraft.scheduling.asset_watchers import polled_watches
from updraft.scheduling.commands.dag_registration import set_paused
from updraft.triggers.base import BaseEventTrigger, TriggerEvent

WATCHED = """
from airflow.providers.standard.triggers.file import FileDeleteTrigger
from airflow.sdk import Asset, AssetWatcher

inbox = Asset("inbox", watchers=[AssetWatcher(name="inbox_watcher",
                                              trigger=FileDeleteTrigger(filepath=FLAG, poke_interval=5.0))])

with DAG("on_inbox", schedule=[inbox], start_date=START, catchup=False):
    EmptyOperator(task_id="consume")
"""


class Always(BaseEventTrigger):
    """An event trigger that fires on every look (what makes a check delivered twice visible)."""

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return f"{__name__}.Always", {}

    async def run(self):
        yield TriggerEvent({"seen": True})


class Broken(BaseEventTrigger):
    def serialize(self) -> tuple[str, dict[str, Any]]:
        return f"{__name__}.Broken", {}

    async def run(self):
        raise OSError("the mount is gone")
        yield  # an async generator, as Airflow's run()


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    files = tmp_path_factory.mktemp("inbox")
    with mock_aws():
        env = DeferralEnv(tmp_path_factory.mktemp("watchers"))
        env.flag = files / "arrived.flag"
        folder = tmp_path_factory.mktemp("watch_dags")
        (folder / "watched.py").write_text(HEADER + f"FLAG = {str(env.flag)!r}\n" + WATCHED)
        env.add_folder(folder)
        yield env


def running_watchers(env) -> list[str]:
    return sorted(e.name for e in env.engine.running() if is_watch_execution(e.name))


def inbox_events(env) -> list[Any]:
    asset = next(a for a in env.store.list_assets() if a.name == "inbox")
    return env.store.list_asset_events(asset.asset_id)


def test_the_watcher_starts_with_the_unpaused_dag_and_a_file_is_one_event_and_one_run(env):
    env.step()
    assert len(running_watchers(env)) == 1
    env.advance(seconds=5)
    assert inbox_events(env) == [] and env.store.list_runs("on_inbox") == []
    env.flag.write_text("go")
    env.advance(seconds=5)  # the check takes the file: an asset event, the listening DAG queued
    assert not env.flag.exists()
    [event] = inbox_events(env)
    assert event.extra == {"from_trigger": True, "payload": True}
    env.step()  # the asset-triggered run, to its end
    env.step()
    [run] = env.store.list_runs("on_inbox")
    assert env.states("on_inbox", run.run_id) == {"consume": "success"}
    env.advance(seconds=5)  # the watcher keeps watching: the same execution, nothing new
    assert len(running_watchers(env)) == 1 and len(inbox_events(env)) == 1
    assert len(env.store.list_runs("on_inbox")) == 1


def test_a_check_delivered_twice_records_its_event_once(env):
    asset = next(a for a in env.store.list_assets() if a.name == "inbox")
    [watch] = polled_watches(asset)
    always = PolledWatch(**{**watch.__dict__, "name": "always", "classpath": f"{__name__}.Always", "kwargs": {}})
    env.store.declare_asset(name="inbox", uri=None, group=None, extra=None, now=env.clock(),
                            watchers=[*asset.watchers, {"name": "always", "source": "poll",
                                                        "classpath": always.classpath, "kwargs": {}}])
    state = always.to_input(1, env.clock())
    before = len(inbox_events(env))
    # Step Functions retries a check whose answer was lost: the same input, a little later
    answers = [check(json.loads(json.dumps(state)), store=env.store, now=env.clock() + dt.timedelta(seconds=late),
                     in_process=True) for late in (0, 3)]
    assert [a["outcome"] for a in answers] == ["fired", "fired"] and answers[0]["seq"] == 1
    assert len(inbox_events(env)) == before + 1  # the second delivery wrote the same event (same id): no new one
    # a trigger that raises is looked at again later, its error in the execution's state; the loop goes on
    broken = PolledWatch(**{**always.__dict__, "name": "broken", "classpath": f"{__name__}.Broken"})
    env.store.declare_asset(name="inbox", uri=None, group=None, extra=None, now=env.clock(),
                            watchers=[*asset.watchers, {"name": "broken", "source": "poll",
                                                        "classpath": broken.classpath, "kwargs": {}}])
    failed = check(broken.to_input(1, env.clock()), store=env.store, now=env.clock(), in_process=True)
    assert (failed["outcome"], failed["error"], failed["seq"]) == ("failed", "OSError: the mount is gone", 1)
    # past RENEW_AFTER checks an execution ends (Step Functions' history limit): the sweep starts the next one
    assert check({**failed, "seq": RENEW_AFTER}, store=env.store, now=env.clock(), in_process=True)["outcome"] == "gone"
    env.store.declare_asset(name="inbox", uri=None, group=None, extra=None, now=env.clock(), watchers=asset.watchers)
    assert check(answers[0], store=env.store, now=env.clock(), in_process=True)["outcome"] == "gone"


def test_pause_stops_the_watcher_and_unpause_starts_it_again(env):
    [first] = running_watchers(env)
    set_paused(env.store, "on_inbox", True)
    env.advance(seconds=5)  # its next check finds no unpaused listener: the execution ends
    assert running_watchers(env) == [] and env.engine.executions[first].status == "SUCCEEDED"
    env.flag.write_text("while paused")
    env.advance(minutes=1)
    assert env.flag.exists() and running_watchers(env) == []  # nobody watches a paused DAG's asset
    set_paused(env.store, "on_inbox", False)
    env.advance(minutes=1)  # the watcher sweep starts the next generation, whose first check takes the file
    [second] = running_watchers(env)
    assert second != first and second.endswith("-g2")
    assert not env.flag.exists() and len(inbox_events(env)) == 3


def test_a_changed_trigger_ends_the_old_watcher_and_starts_the_new_one(env):
    [old] = running_watchers(env)
    asset = next(a for a in env.store.list_assets() if a.name == "inbox")
    changed = [{**w, "kwargs": {**w["kwargs"], "poke_interval": 10.0}} for w in asset.watchers]
    env.store.declare_asset(name="inbox", uri=None, group=None, extra=None, now=env.clock(), watchers=changed)
    env.advance(minutes=1)  # the old one's next check ends it; the sweep starts the new trigger's first generation
    [new] = running_watchers(env)
    assert new != old and new.endswith("-g1") and env.engine.executions[old].status in ("SUCCEEDED", "ABORTED")
    assert env.engine.executions[new].input["watch"]["kwargs"]["poke_interval"] == 10.0


def test_the_file_triggers_delete_what_they_see_as_airflows(tmp_path):
    import asyncio

    from updraft.triggers.file import DirectoryFileDeleteTrigger, FileDeleteTrigger

    us = DirectoryFileDeleteTrigger(directory=str(tmp_path), filename="us.flag", poke_interval=5.0)
    eu = DirectoryFileDeleteTrigger(directory=str(tmp_path), filename="eu.flag", poke_interval=5.0)
    (tmp_path / "us.flag").write_text("")
    assert eu.poll_once() is None and (tmp_path / "us.flag").exists()  # each fires only for its own file
    assert us.poll_once() == TriggerEvent({"filepath": str(tmp_path / "us.flag")})
    assert not (tmp_path / "us.flag").exists() and us.poll_once() is None
    single = FileDeleteTrigger(filepath=str(tmp_path / "test"))
    (tmp_path / "test").write_text("")

    async def first(trigger):
        return await anext(trigger.run())

    assert asyncio.run(first(single)) == TriggerEvent(True) and not (tmp_path / "test").exists()
    assert single.serialize() == ("airflow.providers.standard.triggers.file.FileDeleteTrigger",
                                  {"filepath": str(tmp_path / "test"), "poke_interval": 5.0})
