"""The scheduler tests' usual world: a store on moto, a test clock, a scheduler and the executor it dispatches to."""

from __future__ import annotations

import pytest
from moto import mock_aws

from tests.functional.scheduling.harness import Clock, make_store, scheduler_for


@pytest.fixture
def env():
    with mock_aws():
        store = make_store()
        clock = Clock()
        scheduler, executor = scheduler_for(store, clock)
        yield store, clock, scheduler, executor
