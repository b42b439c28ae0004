"""Local mode runs tries concurrently in threads: contexts, logs and timeouts stay per try."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv
from updraft.model.states import FINISHED_RUN_STATES
from updraft.runtime.worker import handle_dispatch


@pytest.fixture
def env(tmp_path, serialized_moto):
    with mock_aws():
        yield RuntimeEnv(tmp_path)


@pytest.mark.slow
def test_a_fan_out_runs_in_threads_with_separate_contexts_logs_and_timeouts(env):
    env.add("fan", """
    import time

    @dag(schedule=None, start_date=START)
    def fan():
        @task
        def start():
            return list(range(6))

        @task
        def work(i):
            time.sleep(0.05)
            context = get_current_context()
            print(f"work {context['ti'].map_index} got {i}")
            assert context["ti"].map_index == i
            return i

        @task(execution_timeout=datetime.timedelta(seconds=0.2))
        def too_slow():
            for _ in range(100):
                time.sleep(0.02)

        @task
        def total(values):
            return sum(values)

        total(work.expand(i=start()))
        too_slow()

    fan()
    """)
    run = env.trigger("fan")
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(20):
            env.scheduler.run_pass()
            while items := env.executor.take():
                list(pool.map(lambda item: handle_dispatch(
                    item, store=env.store, loader=env.loader, scheduler=env.scheduler, now_fn=env.clock,
                    log_sink=env.logs), items))
            if env.store.get_run("fan", run.run_id).state in FINISHED_RUN_STATES:
                break
    states = env.states("fan", run.run_id)
    assert states.pop("too_slow") == "failed"
    assert set(states.values()) == {"success"}, states
    assert env.xcom("fan", run.run_id, "total") == 15
    for i in range(6):
        log = env.log("fan", run.run_id, "work", map_index=i)
        assert f"work {i} got {i}" in log and log.count("got") == 1
    assert "timed out after 0.2 seconds" in env.ti("fan", run.run_id, "too_slow").note


def test_a_bash_command_in_a_worker_thread_times_out_promptly(env):
    import time

    env.add("slow_bash", """
    with DAG("slow_bash", schedule=None, start_date=START):
        BashOperator(task_id="quiet", bash_command="sleep 120", execution_timeout=datetime.timedelta(seconds=0.3))
        BashOperator(task_id="script", bash_command="script.sh", params={"word": "from-file"})
    """, extra_files={"script.sh": "echo {{ params.word }}\n"})
    run = env.trigger("slow_bash")
    env.scheduler.run_pass()
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda item: handle_dispatch(
            item, store=env.store, loader=env.loader, scheduler=env.scheduler, now_fn=env.clock,
            log_sink=env.logs), env.executor.take()))
    assert time.monotonic() - started < 60  # the 2 minutes' sleep was cut at 0.3 s
    assert "timed out" in env.ti("slow_bash", run.run_id, "quiet").note
    assert env.xcom("slow_bash", run.run_id, "script") == "from-file"
