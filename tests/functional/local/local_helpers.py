"""What the local-mode tests share: writing DAG files, waiting for the asynchronous system."""

from __future__ import annotations

import contextlib
import datetime as dt
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


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


@contextlib.contextmanager
def quick_system(root: Path, dag_files: Callable[[Any], dict[str, str]]) -> Iterator[Any]:
    """A local system on a fast tick, two workers and new DAGs unpaused, for one test module; ``dag_files`` names
    the DAG files to write once it runs (given the system, for its bucket's name)."""
    from updraft.local.system import LocalOptions, LocalSystem

    dags = root / "dags"
    dags.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("UPDRAFT_HOME", str(root / "home"))
        options = LocalOptions(dags_folder=str(dags), tick_seconds=0.5, workers=2, sync_seconds=0.2,
                               grace_seconds=0.0, unpause_new_dags=True)
        started = LocalSystem(options, say=lambda line: None).start()
        try:
            for name, body in dag_files(started).items():
                write_dag(dags, name, body)
            yield started
        finally:
            started.stop()
