"""What running user code in a child process costs (runtime/supervisor.py), against running it in-process.

usage: python bench/task_isolation_bench.py [--tries 30] [--fresh-tries 5]

On moto's DynamoDB (in this process), one DAG with a PythonOperator that pushes an XCom, pulls one and reads a
Variable (so the store proxy is exercised) and an ``on_failure_callback``:

- a try through ``handle_dispatch``: in-process, in a fork of the warm task server (what workers do), and in a
  fresh interpreter per try (``--fresh-tries``: the task server restarted before each try, i.e. a new Python
  importing Updraft and the DAG: the per-try cost before the fork server, the "before" of the table);
- the DAG's failure callback (a ``DagCallbackRequest``) in-process and in a child;
- one look at a polling trigger (``FileTrigger``, the trigger-check Lambda's work) in-process and in a child.

Alternating, so the machine's load changes both sides alike. The first isolated try also waits for the task
server's imports (shown apart). Prints p50/p95/mean in milliseconds; the machine's load changes the figures:
compare runs made on the same machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(ROOT / "shared")]

BODY = """
def work(ti):
    ti.xcom_push(key="seen", value=ti.xcom_pull(task_ids="work", key="seen", default=0))
    from airflow.sdk import Variable
    return Variable.get("bench_var", default="none")

def noted(context):
    print("the run failed", context["reason"])

with DAG("iso_bench", schedule=None, start_date=START, on_failure_callback=noted):
    PythonOperator(task_id="work", python_callable=work)
"""
FILE_TRIGGER = "airflow.providers.standard.triggers.file.FileTrigger"


def _time_tries(env, tries: int, *, in_process: bool) -> list[float]:
    from updraft.runtime.worker import handle_dispatch

    times = []
    for _ in range(tries):
        env.trigger("iso_bench")
        env.scheduler.run_pass()
        (item,) = env.executor.take()
        started = time.perf_counter()
        result = handle_dispatch(item, store=env.store, loader=env.loader, scheduler=env.scheduler,
                                 now_fn=env.clock, log_sink=env.logs, in_process=in_process)
        times.append((time.perf_counter() - started) * 1000)
        assert result is not None and result.state.value == "success", result
        env.executor.take()
        env.clock.advance(seconds=1)
    return times


def _time_fresh(env, tries: int) -> list[float]:
    """Tries each paying a fresh interpreter: the task server is closed first, so the try's child comes from a
    server that must start and import everything again."""
    from updraft.runtime.supervisor import shared_supervisor

    times = []
    for _ in range(tries):
        shared_supervisor().close()
        times += _time_tries(env, 1, in_process=False)
    return times


def _side_run(env) -> str:
    """A finished run of the DAG, which the callbacks and the trigger looks are timed against (no new run each
    time: its tasks would be dispatched among the timed tries)."""
    from updraft.runtime.worker import handle_dispatch

    run = env.trigger("iso_bench", run_id="bench_side")
    env.scheduler.run_pass()
    while items := env.executor.take():
        for item in items:
            handle_dispatch(item, store=env.store, loader=env.loader, scheduler=env.scheduler, now_fn=env.clock,
                            log_sink=env.logs, in_process=True)
    return run.run_id


def _time_callbacks(env, run_id: str, n: int, *, in_process: bool) -> float:
    from updraft.executors.callback_requests import DagCallbackRequest
    from updraft.runtime.worker import run_callback_request

    request = DagCallbackRequest.for_run("iso_bench", run_id, request_id=f"bench-{n}-{in_process}", success=False,
                                         reason="task_failure", ti_key=None)
    started = time.perf_counter()
    assert run_callback_request(request, store=env.store, loader=env.loader, now_fn=env.clock, log_sink=env.logs,
                                in_process=in_process)
    return (time.perf_counter() - started) * 1000


def _time_trigger_look(env, run_id: str, n: int, folder: Path, *, in_process: bool) -> float:
    from updraft.model.records import TIKey
    from updraft.model.states import TaskInstanceState
    from updraft.runtime.trigger_check import check

    key = TIKey("iso_bench", run_id, f"waits_{n}_{in_process}")  # a deferred instance of its own each time
    record = {"classpath": FILE_TRIGGER, "kind": "poll", "times_out": False, "event": None, "timeout_at": None,
              "kwargs": {"filepath": str(folder / "*.never"), "recursive": False, "poke_interval": 30.0}}
    assert env.store.apply_ti_change(key, expected=None, state=TaskInstanceState.DEFERRED,
                                     fields={"try_id": "bench-try", "try_number": 1, "trigger": record})
    state = {"kind": "poll", "resume": {"kind": "resume_deferred", "dag_id": key.dag_id, "run_id": key.run_id,
                                        "task_id": key.task_id, "map_index": -1, "try_number": 1,
                                        "try_id": "bench-try"}}
    started = time.perf_counter()
    assert check(state, store=env.store, now=env.clock(), in_process=in_process)["outcome"] == "waiting"
    return (time.perf_counter() - started) * 1000


def _row(name: str, values: list[float]) -> str:
    p95 = statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]
    return f"{name:<34}{statistics.median(values):9.1f}{p95:9.1f}{statistics.fmean(values):9.1f}{len(values):6}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tries", type=int, default=30)
    parser.add_argument("--fresh-tries", type=int, default=5)
    args = parser.parse_args()
    from moto import mock_aws

    from tests.functional.runtime.rt_harness import RuntimeEnv
    from updraft.runtime.supervisor import shared_supervisor

    with mock_aws(), tempfile.TemporaryDirectory() as tmp:
        env = RuntimeEnv(Path(tmp))
        env.add("iso_bench", BODY)
        env.store.set_variable("bench_var", "v", None)
        _time_tries(env, 2, in_process=True)  # warm the DAG module and the store's caches
        side = _side_run(env)
        started = time.perf_counter()
        shared_supervisor().start()
        server_start = (time.perf_counter() - started) * 1000
        first = _time_tries(env, 1, in_process=False)[0]
        in_process, isolated = [], []
        callbacks_here, callbacks_child, look_here, look_child = [], [], [], []
        for n in range(args.tries):  # alternating, so the machine's load changes both alike
            in_process += _time_tries(env, 1, in_process=True)
            isolated += _time_tries(env, 1, in_process=False)
            callbacks_here.append(_time_callbacks(env, side, n, in_process=True))
            callbacks_child.append(_time_callbacks(env, side, n, in_process=False))
            look_here.append(_time_trigger_look(env, side, n, Path(tmp), in_process=True))
            look_child.append(_time_trigger_look(env, side, n, Path(tmp), in_process=False))
        fresh = _time_fresh(env, args.fresh_tries)
        shared_supervisor().close()
    print(f"{'(ms)':<34}{'p50':>9}{'p95':>9}{'mean':>9}{'n':>6}")
    for name, values in [("try, in-process", in_process), ("try, fresh interpreter (before)", fresh),
                         ("try, fork of the task server", isolated), ("DAG callbacks, in-process", callbacks_here),
                         ("DAG callbacks, in a child", callbacks_child), ("trigger look, in-process", look_here),
                         ("trigger look, in a child", look_child)]:
        print(_row(name, values))
    print(f"per-try overhead: fresh interpreter {statistics.median(fresh) - statistics.median(in_process):.0f} ms, "
          f"fork of the task server {statistics.median(isolated) - statistics.median(in_process):.0f} ms")
    print(f"task server start: {server_start:.0f} ms (once per worker process); first isolated try: {first:.0f} ms")


if __name__ == "__main__":
    main()
