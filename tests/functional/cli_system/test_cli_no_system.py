"""Every command that needs the running system says so in one line when there is none."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.functional.cli_system.cli_helpers import invoke
from updraft.local.endpoint import LocalEndpoint, endpoint_file

pytestmark = pytest.mark.slow

COMMANDS = [
    ("dags", "list"), ("dags", "list-import-errors"), ("dags", "next-execution", "d"), ("dags", "trigger", "d"),
    ("dags", "pause", "d"), ("dags", "unpause", "d"), ("dags", "list-runs", "d"), ("runs", "list", "d"),
    ("tasks", "states", "d", "r"), ("tasks", "logs", "d", "r", "t"), ("tasks", "why", "d", "r", "t"),
    ("pools", "list"), ("pools", "get", "p"),
    ("pools", "set", "p", "1"), ("pools", "delete", "p"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_no_system_running(no_system, args):
    result = invoke(*args)
    assert result.exit_code == 1
    assert result.stderr == "Error: no local Updraft is running (start one with `updraft local`)\n"
    assert result.stdout == ""


def test_upload_without_a_system(no_system, tmp_path):
    (tmp_path / "a.py").write_text("")
    result = invoke("dags", "upload", str(tmp_path / "a.py"))
    assert result.exit_code == 1 and "no local Updraft is running" in result.stderr


def test_a_stale_endpoint_file_names_the_dead_process(no_system):
    dead = _dead_pid()
    LocalEndpoint(endpoint_url="http://127.0.0.1:9", env={}, pid=dead).write(endpoint_file(no_system))
    result = invoke("pools", "list")
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert f"(pid {dead}) is gone" in line and "updraft local" in line


def test_an_unreadable_endpoint_file(no_system):
    no_system.mkdir(parents=True)
    endpoint_file(no_system).write_text(json.dumps({"endpoint_url": "x"}))
    result = invoke("dags", "list")
    assert result.exit_code == 1 and "unreadable" in result.stderr and len(result.stderr.splitlines()) == 1


def _dead_pid() -> int:
    """A pid no process has: a child that already exited and was reaped."""
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def test_a_system_that_does_not_answer_is_one_line_and_verbose_shows_the_traceback(no_system):
    from updraft.config import UpdraftConfig

    dead = "http://127.0.0.1:9"
    config = UpdraftConfig(table="t", region="us-east-1", bucket="b", endpoint_url=dead, dynamodb_endpoint=dead)
    LocalEndpoint(endpoint_url=dead, env=config.to_env(), pid=os.getpid(), api_url=dead
                  ).write(endpoint_file(no_system))
    result = invoke("pools", "list")
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: ") and "Could not connect" in line and "--verbose" in line
    verbose = invoke("--verbose", "pools", "list")
    assert verbose.exit_code == 1 and "Traceback (most recent call last)" in verbose.stderr
