"""The Lambda limit guard (time and memory, interrupting a blocked task), the process tree's memory, the
hand-off's refusals, and the log sink that keeps the Lambda part of a handed-off try."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from updraft.executors.base import Dispatch
from updraft.executors.recording import RecordingExecutor
from updraft.executors.routing import RoutingExecutor
from updraft.model.records import TIKey
from updraft.runtime.handoff import (
    KeepEarlierLog,
    LambdaLimitReached,
    LambdaLimits,
    can_run_on,
    fargate_compute,
    hand_off,
    lambda_limit_guard,
    process_tree_rss_mb,
)
from updraft.sdk.compute import fargate_size_for

KEY = TIKey("etl", "manual__2024-01-01T00:00:00+00:00", "train")


def test_limits_say_which_one_is_near():
    plenty = LambdaLimits(remaining_ms=lambda: 600_000, memory_mb=1024, rss_mb=lambda: 500.0)
    assert plenty.reached() is None
    late = LambdaLimits(remaining_ms=lambda: 20_000, memory_mb=1024, rss_mb=lambda: 500.0)
    assert "time limit (20.0 s left" in str(late.reached()) and late.reached().memory_mb is None
    full = LambdaLimits(remaining_ms=lambda: 600_000, memory_mb=1024, rss_mb=lambda: 950.0)
    assert "memory limit (950 MB of the function's 1024 MB" in str(full.reached())
    assert full.reached().memory_mb == 1024


def test_a_context_without_remaining_time_has_no_limits(monkeypatch):
    assert LambdaLimits.from_context(object()) is None
    monkeypatch.setenv("UPDRAFT_LAMBDA_HANDOFF_MARGIN_SECONDS", "45")

    class Context:
        memory_limit_in_mb = "2048"

        def get_remaining_time_in_millis(self):
            return 1000

    limits = LambdaLimits.from_context(Context())
    assert limits.margin_s == 45 and limits.memory_mb == 2048 and limits.memory_fraction == 0.9


def test_the_guard_interrupts_a_blocked_task_and_is_gone_afterwards():
    limits = LambdaLimits(remaining_ms=lambda: 600_000, memory_mb=100, rss_mb=lambda: 99.0, poll_s=0.01)
    started = time.monotonic()
    with pytest.raises(LambdaLimitReached, match="memory limit"), lambda_limit_guard(limits):
        time.sleep(120)
    assert time.monotonic() - started < 60  # interrupted, not slept through
    with lambda_limit_guard(LambdaLimits(remaining_ms=lambda: 600_000, poll_s=0.01)):
        time.sleep(0.05)  # far from every limit: nothing happens
    with lambda_limit_guard(None):
        pass


def test_the_tree_s_memory_counts_child_processes():
    alone = process_tree_rss_mb()
    child = subprocess.Popen([sys.executable, "-c", "import sys, time; b = bytearray(80 * 2**20); b[::4096] = "
                              "b'x' * len(b[::4096]); print(1, flush=True); time.sleep(30)"],
                             stdout=subprocess.PIPE)
    try:
        child.stdout.readline()
        assert process_tree_rss_mb() - alone > 60
    finally:
        child.kill()
        child.wait()


class Unused:
    def __getattr__(self, name):
        raise AssertionError(f"the store was used ({name}) for a hand-off that cannot happen")


def test_no_hand_off_without_fargate_or_twice():
    lambda_only = RoutingExecutor({"lambda": RecordingExecutor()})
    dispatch = Dispatch(KEY, 1, "a" * 32)
    assert not can_run_on(lambda_only, "fargate") and can_run_on(RecordingExecutor(), "fargate")
    reached = LambdaLimitReached("r")
    assert hand_off(Unused(), dispatch, executor=lambda_only, reached=reached, now=None) is None
    twice = Dispatch(KEY, 1, "a" * 32, executor="fargate", handed_off=True)
    assert hand_off(Unused(), twice, executor=RecordingExecutor(), reached=reached, now=None) is None


@pytest.mark.parametrize(("memory", "size"), [(1, (256, 512)), (4096, (512, 4096)), (6016, (1024, 6144)),
                                              (20480, (4096, 20480)), (500_000, (16384, 122880))])
def test_fargate_sizes(memory, size):
    assert fargate_size_for(memory) == size


def test_a_memory_hand_off_gets_twice_the_lambda_s_memory_unless_the_task_asked_for_more():
    lambda_task = {"executor": "lambda", "cpu": None, "memory": None}
    assert fargate_compute(lambda_task, None) == {"executor": "fargate", "cpu": None, "memory": None}
    assert fargate_compute(lambda_task, 3008) == {"executor": "fargate", "cpu": 1024, "memory": 6144}
    big = {"executor": "lambda", "cpu": 4096, "memory": 16384}
    assert fargate_compute(big, 3008) == {**big, "executor": "fargate"}


class MemorySink:
    def __init__(self) -> None:
        self.logs: dict = {}

    def write(self, key, try_number, text):
        self.logs[(key, try_number)] = text

    def read(self, key, try_number):
        return self.logs.get((key, try_number))


def test_the_fargate_part_of_a_try_is_written_after_its_lambda_part():
    sink = MemorySink()
    sink.write(KEY, 1, "lambda part\n")
    other = KEY._replace(task_id="other")
    kept = KeepEarlierLog(sink, KEY, 1)
    kept.write(KEY, 1, "fargate part\n")
    kept.write(other, 1, "another log\n")
    assert kept.read(KEY, 1) == "lambda part\nfargate part\n" and sink.read(other, 1) == "another log\n"


def test_pages_a_forked_child_shares_with_its_parent_count_once():
    """A try's child is a fork of the warm task server: the pages it shares with the server are in the function's
    memory once, so the tree's memory grows by what the child adds, not by the server's size again."""
    hold = bytearray(64 * 2**20)
    hold[::4096] = b"x" * len(hold[::4096])  # resident in this process, then shared with the fork
    alone = process_tree_rss_mb()
    ready_r, ready_w = os.pipe()
    wait_r, wait_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child touches nothing: it only says it is there and waits
        os.write(ready_w, b"1")
        os.read(wait_r, 1)
        os._exit(0)
    try:
        os.read(ready_r, 1)
        assert process_tree_rss_mb() - alone < 32, "the child's shared pages were counted again"
    finally:
        os.write(wait_w, b"1")
        os.waitpid(pid, 0)
        for fd in (ready_r, ready_w, wait_r, wait_w):
            os.close(fd)
