"""A running local system for the module, on a DAGs folder the tests write into."""

from __future__ import annotations

import datetime as dt
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from updraft.local.system import LocalOptions, LocalSystem


def write_dag(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return path


def eventually(predicate: Callable[[], Any], *, timeout: float = 30.0, every: float = 0.1) -> Any:
    """Poll until ``predicate()`` is truthy (the system is asynchronous by design) or fail with its last value."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value:
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {timeout} s: last value {value!r}")
        time.sleep(every)
        value = predicate()
    return value


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@pytest.fixture
def updraft_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("UPDRAFT_HOME", str(home))
    return home


@pytest.fixture
def start_system(tmp_path: Path, updraft_home: Path) -> Iterator[Callable[..., LocalSystem]]:
    """Start local systems with fast ticks; every one still running at the end of the test is stopped."""
    started: list[LocalSystem] = []

    def start(dags_folder: Path, **options: Any) -> LocalSystem:
        defaults: dict[str, Any] = {"tick_seconds": 0.5, "workers": 2, "sync_seconds": 0.2, "grace_seconds": 0.0}
        system = LocalSystem(LocalOptions(dags_folder=str(dags_folder), **{**defaults, **options}),
                             say=lambda line: None).start()
        started.append(system)
        return system

    yield start
    for system in started:
        if not system._stopping:
            system.stop()
