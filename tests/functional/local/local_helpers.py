"""What the local-mode tests share: writing DAG files, waiting for the asynchronous system."""

from __future__ import annotations

import datetime as dt
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


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
