"""A try that prints more than its log keeps (issue 34): a task printing 100 MB never ended (6 minutes, no log).

The try runs in a child of the worker's task server, as on AWS, with ``UPDRAFT_TASK_LOG_MAX_BYTES`` small so the
test is quick (``bench/log_volume_bench.py`` prints 100 MB under the default limit). The try ends as it would
have, and its stored log keeps its beginning and end with a line saying how many bytes were left out between.
"""

from __future__ import annotations

import re

import pytest
from moto import mock_aws

from tests.functional.runtime.rt_harness import RuntimeEnv
from updraft.runtime.log_limit import utf8_len
from updraft.runtime.worker import handle_dispatch

LIMIT = 64 * 1024
LINES = 30_000  # 3 MB of 100-byte lines
CUT = re.compile(r"\[\.\.\. ([\d,]+) bytes of this try's log left out here: the log passed its limit of ([\d,]+) bytes")

DAG_FILE = f"""
import os, sys

def chatty():
    for n in range({LINES}):
        print(f"{{n:08d}} " + "x" * 90)
    print("the last line")
    return "done"

def vanish():
    chatty()
    sys.stdout.flush()  # what a process killed outright had written out
    os._exit(3)

with DAG("chatty", schedule=None, start_date=START):
    PythonOperator(task_id="chatty", python_callable=chatty)
    PythonOperator(task_id="vanish", python_callable=vanish)
"""


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("UPDRAFT_TASK_LOG_MAX_BYTES", str(LIMIT))
    with mock_aws():
        runtime = RuntimeEnv(tmp_path)
        runtime.add("chatty", DAG_FILE)
        yield runtime


def test_a_try_printing_past_its_log_limit_ends_normally_and_its_log_says_what_was_cut(env) -> None:
    run = env.trigger("chatty")
    env.scheduler.run_pass()
    for item in env.executor.take():
        handle_dispatch(item, store=env.store, loader=env.loader, scheduler=env.scheduler, now_fn=env.clock,
                        log_sink=env.logs)
    assert env.states("chatty", run.run_id) == {"chatty": "success", "vanish": "failed"}
    assert env.xcom("chatty", run.run_id, "chatty") == "done"
    for task_id, last in (("chatty", "end of try 1"), ("vanish", "the task's process ended without a result")):
        log = env.log("chatty", run.run_id, task_id)
        assert utf8_len(log) <= LIMIT + 200, task_id  # the end's own line after the relayed log
        (cut,) = CUT.finditer(log)
        left_out = int(cut.group(1).replace(",", ""))
        assert LINES * 100 - LIMIT < left_out < LINES * 100, (task_id, left_out)
        assert log.startswith("00000000 ") or "\n00000000 " in log[:2000]
        assert "the last line\n" in log[cut.end():] and log.rstrip().endswith(last), task_id
