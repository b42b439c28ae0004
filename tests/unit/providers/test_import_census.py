"""Import census of the real provider packages (issue 31): every DAG-facing module of each provider the tests pin
(tests/providers/requirements.txt) is imported in a fresh process, one process per provider.

``census_expected.json`` lists, per provider, the modules that import: the test fails when one of them stops
importing (a name the shim lost), and when a module starts importing it asks for the list to be updated, so the
README's table (``python bench/provider_census.py SITE``) stays true.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from provider_census import PROVIDERS, census, needs

from tests.provider_packages import installed_providers

EXPECTED = Path(__file__).with_name("census_expected.json")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def providers_site() -> Path:
    """The installed test providers (tests/provider_packages.py)."""
    return installed_providers().site


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_provider_modules_keep_importing(provider: str, providers_site: Path) -> None:
    expected = set(json.loads(EXPECTED.read_text())[provider])
    result = census(providers_site, provider)
    importing = {module for module, error in result.items() if error is None}
    lost = {module: result.get(module, "no longer installed") for module in expected - importing}
    assert not lost, f"modules of {provider} that imported no longer do: {lost}"
    gained = importing - expected
    assert not gained, f"modules of {provider} now import; add them to {EXPECTED.name}: {sorted(gained)}"
    gaps = {module: error for module, error in result.items() if error is not None and needs(error) is None}
    assert not gaps, f"modules of {provider} fail for want of a name Updraft's airflow package lacks: {gaps}"
