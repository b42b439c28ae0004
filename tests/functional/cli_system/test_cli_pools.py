"""`updraft pools list|get|set|delete` against a running system."""

from __future__ import annotations

import json

import pytest

from tests.functional.cli_system.cli_helpers import invoke

pytestmark = pytest.mark.slow


def test_default_pool_is_always_listed(local_system):
    result = invoke("pools", "list", "-o", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [
        {"pool": "default_pool", "slots": 128, "description": "Default pool", "occupied_slots": 0}]


def test_set_creates_then_resizes_keeping_the_description(local_system):
    created = invoke("pools", "set", "etl", "4", "nightly loads", "-o", "json")
    assert created.exit_code == 0, created.output
    assert json.loads(created.stdout) == [
        {"pool": "etl", "slots": 4, "description": "nightly loads", "occupied_slots": 0}]
    resized = invoke("pools", "set", "etl", "8")
    assert resized.exit_code == 0
    pool = local_system.store.get_pool("etl")
    assert (pool.slots, pool.description) == (8, "nightly loads")
    listed = invoke("pools", "list").stdout.splitlines()
    assert listed[0].split(" | ")[0].strip() == "pool"
    assert [line.split()[0] for line in listed[2:]] == ["default_pool", "etl"]
    assert json.loads(invoke("pools", "get", "etl", "-o", "json").stdout)[0]["slots"] == 8


def test_delete(local_system):
    invoke("pools", "set", "etl", "4")
    result = invoke("pools", "delete", "etl")
    assert (result.exit_code, result.stdout) == (0, "Pool etl deleted\n")
    assert local_system.store.get_pool("etl") is None
    again = invoke("pools", "delete", "etl")
    assert (again.exit_code, again.stderr) == (1, "Error: Pool etl does not exist\n")
    missing = invoke("pools", "get", "etl")
    assert (missing.exit_code, missing.stderr) == (1, "Error: Pool etl does not exist\n")


def test_default_pool_cannot_be_deleted(local_system):
    result = invoke("pools", "delete", "default_pool")
    assert (result.exit_code, result.stderr) == (1, "Error: default_pool cannot be deleted\n")
    assert local_system.store.get_pool("default_pool").slots == 128


def test_slots_must_be_a_number(local_system):
    result = invoke("pools", "set", "etl", "many")
    assert result.exit_code == 2 and "SLOTS" in result.stderr
    assert local_system.store.get_pool("etl") is None
