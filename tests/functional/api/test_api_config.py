"""``GET /api/v2/config`` and ``.../config/section/{section}/option/{option}``: the Airflow options this
environment's settings stand for, as Airflow 3.3 answers them: hidden unless ``[api] expose_config``, sensitive
values masked, JSON or Airflow's text by ``Accept``."""

from __future__ import annotations

import pytest

from updraft.config import EXPOSE_CONFIG_VAR

HIDDEN_MESSAGE = "Your Airflow administrator chose not to expose the configuration, most likely for security reasons."


@pytest.fixture
def exposed(monkeypatch):
    monkeypatch.setenv(EXPOSE_CONFIG_VAR, "True")
    monkeypatch.setenv("UPDRAFT_PARALLELISM", "7")
    monkeypatch.setenv("AIRFLOW__SECRETS__BACKEND",
                       "airflow.providers.amazon.aws.secrets.secrets_manager.SecretsManagerBackend")
    monkeypatch.setenv("AIRFLOW__SECRETS__BACKEND_KWARGS", '{"connections_prefix": "secret-prefix"}')


def test_hidden_unless_expose_config_as_airflow_by_default(api, monkeypatch):
    monkeypatch.delenv(EXPOSE_CONFIG_VAR, raising=False)
    for path in ("/api/v2/config", "/api/v2/config/section/core/option/parallelism"):
        answer = api.get(path)
        assert (answer.status, answer.body) == (403, {"detail": HIDDEN_MESSAGE})


def test_the_settings_airflow_options_with_sensitive_values_masked(api, exposed):
    answer = api.get("/api/v2/config")
    assert answer.status == 200
    sections = {s["name"]: {o["key"]: o["value"] for o in s["options"]} for s in answer.body["sections"]}
    assert list(sections) == ["core", "secrets", "api", "scheduler"]  # Airflow's section order; no email set
    assert sections["core"]["parallelism"] == "7"
    assert sections["core"]["dags_folder"] == "s3://updraft-api-bucket/dags/"
    assert sections["core"]["dags_are_paused_at_creation"] == "True"
    assert sections["secrets"] == {"backend": "airflow.providers.amazon.aws.secrets.secrets_manager."
                                   "SecretsManagerBackend", "backend_kwargs": "< hidden >"}
    assert sections["api"]["expose_config"] == "True"
    assert "secret-prefix" not in str(answer.body)

    core = api.get("/api/v2/config", query={"section": "core"})
    assert [s["name"] for s in core.body["sections"]] == ["core"]
    assert api.get("/api/v2/config", query={"section": "database"}).body == {"detail": "Section database not found."}

    text = api.get("/api/v2/config", query={"section": "secrets"}, headers={"Accept": "text/plain"})
    assert text.status == 200 and text.headers["Content-Type"].startswith("text/plain")
    assert text.body == ("[secrets]\nbackend = airflow.providers.amazon.aws.secrets.secrets_manager."
                         "SecretsManagerBackend\nbackend_kwargs = < hidden >\n")
    assert api.get("/api/v2/config", headers={"Accept": "application/xml"}).status == 406


def test_one_option_masked_or_not_found_as_airflow(api, exposed):
    answer = api.get("/api/v2/config/section/core/option/parallelism")
    assert answer.body == {"sections": [{"name": "core", "options": [{"key": "parallelism", "value": "7"}]}]}
    masked = api.get("/api/v2/config/section/secrets/option/backend_kwargs")
    assert masked.body["sections"][0]["options"] == [{"key": "backend_kwargs", "value": "< hidden >"}]
    missing = api.get("/api/v2/config/section/core/option/fernet_key")
    assert (missing.status, missing.body) == (404, {"detail": "Option [core/fernet_key] not found."})
