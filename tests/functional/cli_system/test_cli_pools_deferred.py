"""`updraft pools set --include-deferred`: Airflow's include_deferred, through the REST API."""

from __future__ import annotations

import pytest

from tests.functional.cli_system.cli_helpers import invoke

pytestmark = pytest.mark.slow


def test_set_include_deferred_then_leave_it_unchanged_then_exclude(local_system):
    assert invoke("pools", "set", "waits", "2", "--include-deferred").exit_code == 0
    assert local_system.store.get_pool("waits").include_deferred is True
    assert invoke("pools", "set", "waits", "3").exit_code == 0  # not given: unchanged
    assert (local_system.store.get_pool("waits").slots, local_system.store.get_pool("waits").include_deferred) == (
        3, True)
    assert invoke("pools", "set", "waits", "3", "--exclude-deferred").exit_code == 0
    assert local_system.store.get_pool("waits").include_deferred is False
