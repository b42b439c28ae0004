"""``GET /api/v2/providers``: the environment's providers as Airflow 3.3's route lists them, read from the
installer's ``providers.json`` (here: the test providers' real install)."""

from __future__ import annotations

import pytest

from tests.provider_packages import installed_providers
from updraft.requirements.provider_info import VAR


@pytest.mark.slow
def test_the_installed_providers_and_updrafts_standard_provider_are_listed_as_airflow_lists_them(api, monkeypatch):
    installed = installed_providers()
    monkeypatch.setenv(VAR, str(installed.providers_file))
    answer = api.get("/api/v2/providers")
    assert answer.status == 200
    names = [p["package_name"] for p in answer.body["providers"]]
    assert names == sorted(names) and answer.body["total_entries"] == len(names) == len(installed.providers) + 1
    assert len(names) >= 14  # the twelve, common-compat and Updraft's standard
    by_name = {p["package_name"]: p for p in answer.body["providers"]}
    assert by_name["apache-airflow-providers-http"] == {
        "package_name": "apache-airflow-providers-http", "version": "6.3.0",
        "description": "Hypertext Transfer Protocol (HTTP) https://www.w3.org/Protocols/",
        "documentation_url": "https://airflow.apache.org/docs/apache-airflow-providers-http/6.3.0"}
    assert by_name["apache-airflow-providers-standard"]["version"] == "1.21.0"
    page = api.get("/api/v2/providers?limit=2&offset=1")
    assert [p["package_name"] for p in page.body["providers"]] == names[1:3] and page.body["total_entries"] == len(names)


def test_without_requirements_only_updrafts_own_standard_provider(api, monkeypatch):
    monkeypatch.delenv(VAR, raising=False)
    answer = api.get("/api/v2/providers")
    assert answer.status == 200
    assert [p["package_name"] for p in answer.body["providers"]] == ["apache-airflow-providers-standard"]
