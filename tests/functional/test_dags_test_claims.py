"""`updraft dags test` claims no more tries than its workers can run, so tries start in priority order (issue 20).

Airflow's LocalExecutor has exactly ``parallelism`` processes: nothing is queued beyond what can run, and a try that
becomes ready later is claimed before lower-priority ones that were ready first. Claiming beyond the workers would
park tries in the thread pool's FIFO queue, holding their slots, and run them in arrival order instead.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from updraft.local.dag_test import run_dag_test
from updraft.serialization import deserialize_dag

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fast_dags_test_ticks")]

FOLDER = Path(__file__).parent / "dags_test_claims"
REPEATS = 8  # each a whole `dags test` (~2 s); an ordering race shows within a few


def _starts(dag_id: str, *, workers: int) -> tuple[list[str], list[tuple[str, str]]]:
    """The labels in the order their tries started, and every (label, state) change in order."""
    changes: list[tuple[str, str]] = []
    lock = threading.Lock()

    def on_change(label: str, state: str, try_number: int) -> None:
        with lock:
            changes.append((label, state))

    result = run_dag_test(dag_id, dags_folder=str(FOLDER), workers=workers, on_change=on_change)
    assert result.run_state == "success", result.tasks
    return [label for label, state in changes if state == "running"], changes


def _weights_and_upstreams(dag_id: str) -> tuple[dict[str, int], dict[str, set[str]]]:
    from updraft.parsing import ParseOptions, parse_dags_folder

    parsed = parse_dags_folder(str(FOLDER), ParseOptions())
    document = next(d for f in parsed.files for d in f.dags if d["dag"]["dag_id"] == dag_id)
    dag = deserialize_dag(document)
    return ({t.task_id: t.effective_priority_weight for t in dag.tasks},
            {t.task_id: set(t.upstream_task_ids) for t in dag.tasks})


def test_one_worker_starts_tries_in_priority_order_every_time() -> None:
    weights, upstreams = _weights_and_upstreams("priority_order")
    for _ in range(REPEATS):
        order, _ = _starts("priority_order", workers=1)
        assert sorted(order) == sorted(weights)
        for i, started in enumerate(order):
            ready = {t for t in weights if t not in order[:i] and upstreams[t] <= set(order[:i])}
            assert weights[started] == max(weights[t] for t in ready), (
                f"{started} (weight {weights[started]}) started while {sorted(ready)} were ready: {order}")


def test_no_more_slots_held_than_there_are_workers() -> None:
    _, changes = _starts("pool_of_ten", workers=4)
    holding: set[str] = set()
    peak = 0
    for label, state in changes:
        if state in ("queued", "running"):
            holding.add(label)
        else:
            holding.discard(label)
        peak = max(peak, len(holding))
    assert peak == 4
