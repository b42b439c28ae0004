"""A real `updraft local` for the API's end-to-end tests (the official client, airflowctl), and a wait helper."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from updraft.local.system import LocalOptions, LocalSystem


def until(predicate, timeout: float = 60.0):
    """The predicate's first true value, polled every 0.2 s; fails the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"not true after {timeout} s"
        time.sleep(0.2)
    return value


@contextmanager
def running_local_system(root: Path, dag_files: dict[str, str], *, workers: int) -> Iterator[LocalSystem]:
    """Local mode serving ``dag_files`` (name -> source) with its own ``UPDRAFT_HOME`` under ``root``."""
    dags = root / "dags"
    dags.mkdir()
    for name, source in dag_files.items():
        (dags / name).write_text(textwrap.dedent(source))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("UPDRAFT_HOME", str(root / "home"))
        running = LocalSystem(LocalOptions(dags_folder=str(dags), tick_seconds=0.5, workers=workers, sync_seconds=0.2,
                                           grace_seconds=0.0), say=lambda line: None).start()
        try:
            yield running
        finally:
            running.stop()
