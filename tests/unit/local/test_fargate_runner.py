"""Local mode's ``ecs:RunTask``: each task a process whose end is reported once, and which nothing leaves unwaited."""

from __future__ import annotations

import threading
from typing import Any

from updraft.local.workers import FargateRunner, FargateTask


def _run(runner: FargateRunner, code: str) -> tuple[list[tuple[FargateTask, Any]], threading.Event]:
    """Start a task running ``code``; what its end reports, and when it has."""
    ended: list[tuple[FargateTask, Any]] = []
    done = threading.Event()

    def on_exit(task: FargateTask, result: dict[str, Any] | None) -> None:
        ended.append((task, result))
        done.set()

    request = {"cluster": "local", "overrides": {"containerOverrides": [{"command": ["python", "-c", code]}]}}
    runner.run_task(request, "t1", on_exit)
    return ended, done


def test_a_task_that_ends_reports_its_last_json_line_and_leaves_its_pipe_closed_and_its_process_reaped() -> None:
    runner = FargateRunner({})
    ended, done = _run(runner, "print('starting'); print('{\"state\": \"success\"}')")

    assert done.wait(30)
    ((task, result),) = ended
    assert result == {"state": "success"}
    assert task.process.returncode == 0
    assert task.process.stdout is not None and task.process.stdout.closed
    assert runner.running == {}


def test_stop_kills_a_running_task_and_reaps_it_before_returning_it() -> None:
    runner = FargateRunner({})
    ended, done = _run(runner, "import time; time.sleep(60)")
    (task,) = runner.running.values()  # a minute long: still running

    stopped = runner.stop()

    assert stopped == [task]
    assert task.process.returncode is not None and task.process.returncode < 0  # killed by a signal, and waited for
    assert done.wait(30)  # its end is still reported, once
    assert [t for t, _ in ended] == [task]
