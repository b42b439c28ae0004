"""Local mode's compute runs below local mode's own process (``workers.COMPUTE_NICENESS``): a Fargate task's
process here, the worker pool's processes and the tries of both in ``tests/functional/local``."""

from __future__ import annotations

import os
import threading
from typing import Any

from updraft.cli.local import local
from updraft.local.workers import COMPUTE_NICENESS, FargateRunner, FargateTask


def test_a_fargate_task_runs_its_niceness_below_the_process_that_started_it() -> None:
    runner = FargateRunner({}, niceness=4)
    results: list[dict[str, Any] | None] = []
    done = threading.Event()

    def on_exit(task: FargateTask, result: dict[str, Any] | None) -> None:
        results.append(result)
        done.set()

    # The niceness is set just after the process starts: read once the interpreter has surely started.
    code = "import json, os, time; time.sleep(0.5); print(json.dumps({'nice': os.nice(0)}))"
    runner.run_task({"overrides": {"containerOverrides": [{"command": ["python", "-c", code]}]}}, "t1", on_exit)

    assert done.wait(30)
    assert results == [{"nice": min(19, os.nice(0) + 4)}]


def test_updraft_local_defaults_to_the_compute_niceness_local_mode_is_measured_with() -> None:
    (option,) = [param for param in local.params if param.name == "compute_niceness"]
    assert option.default == COMPUTE_NICENESS
