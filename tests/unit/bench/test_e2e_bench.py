"""The end-to-end benchmark's CPU count: every process of the system, living or waited for."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from bench.e2e_bench import settle, tree_cpu_s

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3:\n    pass\nprint('burnt', flush=True)\n"
STAY = BURN + "time.sleep(30)\n"


def test_a_child_that_ran_and_was_waited_for_counts() -> None:
    before = tree_cpu_s()
    subprocess.run([sys.executable, "-c", BURN], check=True, capture_output=True)
    assert tree_cpu_s() - before >= 0.25


def test_a_living_grandchild_counts_under_its_branch_and_a_sibling_branch_does_not() -> None:
    sibling = subprocess.Popen([sys.executable, "-c", STAY], stdout=subprocess.PIPE, text=True)
    # A shell whose child burns: the CPU is the grandchild's, counted from the shell down while it lives.
    branch = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "$0"; true', STAY], stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        for process in (sibling, branch):
            assert process.stdout is not None and process.stdout.readline().strip() == "burnt"
        assert 0.25 <= tree_cpu_s(branch.pid) < 0.5  # the grandchild's 0.3 s, not the sibling's
        assert tree_cpu_s() >= tree_cpu_s(branch.pid) + tree_cpu_s(sibling.pid)  # ours holds both
    finally:
        os.killpg(branch.pid, signal.SIGKILL)  # the shell and the burner below it
        sibling.kill()
        for process in (sibling, branch):
            process.wait()


class _Machine:
    """A clock that advances with ``sleep`` and a CPU count that grows by the given rate each second."""

    def __init__(self, rates: list[float]) -> None:
        self.rates, self.spent, self.slept = rates, 0.0, 0.0

    def sleep(self, seconds: float) -> None:
        self.spent += self.rates[min(int(self.slept), len(self.rates) - 1)] * seconds
        self.slept += seconds

    def cpu(self) -> float:
        return self.spent


def test_settle_waits_for_two_quiet_seconds_in_a_row() -> None:
    machine = _Machine([1.5, 0.1, 0.9, 0.1, 0.1, 0.1])  # warming up, a lull, busy again, then quiet
    assert settle(cpu=machine.cpu, sleep=machine.sleep) == 5.0


def test_settle_gives_up_at_its_limit() -> None:
    machine = _Machine([1.0])
    assert settle(limit_s=4, cpu=machine.cpu, sleep=machine.sleep) == 4.0
