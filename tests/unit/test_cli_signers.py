"""How the CLI authenticates to an environment: SigV4 for execute-api, or a bearer token."""

from __future__ import annotations

import click
import pytest

from updraft.cli.environments import Environment
from updraft.cli.signers import region_of, signer_for

URL = "https://abc123.execute-api.eu-west-1.amazonaws.com/dev/api/v2/dags?limit=1"


def test_the_region_is_the_environments_else_the_api_hosts():
    assert region_of(URL, None) == "eu-west-1"
    assert region_of(URL, "us-east-2") == "us-east-2"
    assert region_of("http://127.0.0.1:8080", None) is None


def test_sigv4_signs_for_execute_api_with_the_session_token(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session")
    monkeypatch.delenv("AWS_SECURITY_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    sign = signer_for("dev", Environment(url=URL))
    assert sign is not None
    headers = sign("GET", URL, {"Accept": "application/json"}, b"")
    assert headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/execute-api/aws4_request" in headers["Authorization"]
    assert headers["X-Amz-Security-Token"] == "session" and headers["Accept"] == "application/json"


def test_no_credentials_is_one_clear_error(monkeypatch, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)
    monkeypatch.delenv("AWS_WEB_IDENTITY_TOKEN_FILE", raising=False)
    sign = signer_for("dev", Environment(url=URL))
    assert sign is not None
    with pytest.raises(click.ClickException, match="no AWS credentials found"):
        sign("GET", URL, {}, b"")


def test_a_stored_token_wins_and_none_sends_nothing():
    sign = signer_for("dev", Environment(url=URL, token="t0k"))
    assert sign is not None and sign("GET", URL, {}, b"") == {"Authorization": "Bearer t0k"}
    assert signer_for("dev", Environment(url=URL, auth="none")) is None
    with pytest.raises(click.ClickException, match="updraft login --env dev"):
        signer_for("dev", Environment(url=URL, auth="token"))
