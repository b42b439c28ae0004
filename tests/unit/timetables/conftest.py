from __future__ import annotations

import json
from typing import Any

import pytest
from timetables_helpers import BENCH_COPY, PLUGINS_FOLDER

from updraft.plugins import load_plugins_folder


@pytest.fixture(scope="session")
def bench() -> dict[str, Any]:
    return json.loads(BENCH_COPY.read_text())


@pytest.fixture
def workday_module():
    """The how-to's plugin file, loaded the way a plugins folder is (again for each test: another test in the
    same process may load the folder after it, which registers fresh classes)."""
    result = load_plugins_folder(PLUGINS_FOLDER)
    assert result.import_errors == {}
    import workday

    return workday

