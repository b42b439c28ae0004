"""The real provider packages the tests run (tests/providers/requirements.txt), installed by `make install` into the
venv's requirements cache: found there without the network, or a clear failure saying how to install them."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

from updraft.requirements.install import Installed, install

REQUIREMENTS = Path(__file__).parent / "providers" / "requirements.txt"


@functools.cache
def installed_providers() -> Installed:
    """The installed folder (never installs from the network: a cache miss fails, naming `make install`)."""
    previous = os.environ.get("PIP_NO_INDEX")
    os.environ["PIP_NO_INDEX"] = "1"
    try:
        return install(REQUIREMENTS)
    except Exception as exc:  # any failure here is the same fix
        pytest.fail(f"the test providers are not installed in {os.environ.get('UPDRAFT_REQUIREMENTS_CACHE')}: run "
                    f"`make install` (it installs {REQUIREMENTS}) ({exc})")
    finally:
        if previous is None:
            del os.environ["PIP_NO_INDEX"]
        else:
            os.environ["PIP_NO_INDEX"] = previous
