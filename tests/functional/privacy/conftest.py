"""The scenario folder every privacy test runs in (``unprivileged.scenario_folder``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functional.privacy.unprivileged import scenario_folder


@pytest.fixture
def work() -> Iterator[Path]:
    with scenario_folder() as path:
        yield path
