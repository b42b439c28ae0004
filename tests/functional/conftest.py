"""What the functional tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def fast_dags_test_ticks() -> Iterator[None]:
    """`dags test`'s run loop polls once a second; a shorter tick keeps a module of many runs fast without
    changing any outcome (tries are scheduled by the workers' completions, not by the poll)."""
    import updraft.local.dag_test as dag_test

    saved = dag_test.TICK_S
    dag_test.TICK_S = 0.2
    yield
    dag_test.TICK_S = saved
