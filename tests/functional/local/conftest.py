"""A running local system per test, on a DAGs folder the test writes into."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from updraft.local.system import LocalOptions, LocalSystem


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
