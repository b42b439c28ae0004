"""``GET /api/v2/connections/hook_meta``: the connection form's types, exactly as Airflow 3.3.2 answers its
``GET /ui/connections/hook_meta`` for the same provider wheels.

``airflow_hook_meta.json`` is Airflow's own ``HookMetaService.hook_meta_data()`` run on the real wheels
(bench/providers_fixture.py --airflow-answer); ``providers.json`` is the installer's file for those wheels.
"""

from __future__ import annotations

import json
from pathlib import Path

from updraft.requirements.provider_info import VAR

DATA = Path(__file__).resolve().parents[2] / "unit" / "requirements"
AIRFLOW_ANSWER = json.loads((DATA / "airflow_hook_meta.json").read_text())


def test_the_installed_providers_types_as_airflow_answers_them(api, monkeypatch):
    monkeypatch.setenv(VAR, str(DATA / "providers.json"))
    answer = api.get("/api/v2/connections/hook_meta")
    assert answer.status == 200
    assert [t["connection_type"] for t in answer.body] == [t["connection_type"] for t in AIRFLOW_ANSWER]
    assert answer.body == AIRFLOW_ANSWER
    # The provider's fields in its order (the form draws them so).
    assert [list(t["extra_fields"] or {}) for t in answer.body] == [list(t["extra_fields"] or {})
                                                                   for t in AIRFLOW_ANSWER]
    aws = next(t for t in answer.body if t["connection_type"] == "aws")
    assert aws["standard_fields"]["login"] == {"hidden": False, "title": "AWS Access Key ID",
                                               "placeholder": "YOUR_AWS_ACCESS_KEY_ID"}
    assert aws["standard_fields"]["host"]["hidden"] is True


def test_without_providers_only_updrafts_own_types(api, monkeypatch):
    monkeypatch.delenv(VAR, raising=False)
    answer = api.get("/api/v2/connections/hook_meta")
    assert answer.status == 200
    assert answer.body == [t for t in AIRFLOW_ANSWER if t["connection_type"] in ("email", "fs", "generic",
                                                                                "package_index")]


def test_a_sensitive_extra_fields_default_is_masked(api, monkeypatch, tmp_path):
    """Airflow's ConnectionHookMetaData masks a default under a sensitive name, keeping its schema."""
    info = [{"package-name": "apache-airflow-providers-acme", "version": "1.0.0", "connection-types": [
        {"connection-type": "acme", "hook-class-name": "acme.AcmeHook", "hook-name": "Acme",
         "conn-fields": {"api_token": {"label": "Token", "schema": {"type": ["string", "null"],
                                                                    "default": "tok-123456"}},
                         "region": {"label": "Region", "schema": {"type": ["string", "null"], "default": "eu"}}}}]}]
    path = tmp_path / "providers.json"
    path.write_text(json.dumps(info))
    monkeypatch.setenv(VAR, str(path))
    acme = next(t for t in api.get("/api/v2/connections/hook_meta").body if t["connection_type"] == "acme")
    assert acme["extra_fields"]["api_token"]["value"] == "***"
    assert acme["extra_fields"]["api_token"]["schema"]["default"] == "tok-123456"  # as Airflow: only value
    assert acme["extra_fields"]["region"]["value"] == "eu"
    assert acme["standard_fields"] is None and acme["default_conn_name"] is None


def test_a_broken_providers_file_is_answered_naming_it(api, monkeypatch, tmp_path):
    path = tmp_path / "providers.json"
    path.write_text("{}")
    monkeypatch.setenv(VAR, str(path))
    answer = api.get("/api/v2/connections/hook_meta")
    assert answer.status == 500
    assert answer.body["detail"].startswith("The environment's installed providers cannot be read: ")
    assert str(path) in answer.body["detail"]

