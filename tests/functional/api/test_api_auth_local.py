"""``updraft local`` with users (``LocalOptions.users``, the CLI's ``--users``): Airflow's official client logs in
with a username and password and gets what its role allows; without a token, local mode's API Gateway is 401."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import airflow_client.client as af
import pytest
from airflow_client.client.api.dag_api import DAGApi
from airflow_client.client.api.dag_run_api import DagRunApi
from airflow_client.client.api.pool_api import PoolApi
from airflow_client.client.exceptions import ForbiddenException, UnauthorizedException
from airflow_client.client.models.pool_body import PoolBody
from airflow_client.client.models.trigger_dag_run_post_body import TriggerDAGRunPostBody

from updraft.local.system import LocalOptions, LocalSystem

PASSWORDS = {"vera": "vera-password", "otto": "otto-password"}


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("auth-local")
    (root / "dags").mkdir()
    (root / "passwords.json").write_text(json.dumps(PASSWORDS))
    said: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("UPDRAFT_HOME", str(root / "home"))
        running = LocalSystem(LocalOptions(dags_folder=str(root / "dags"), tick_seconds=5, workers=1,
                                           sync_seconds=5, grace_seconds=0.0, users="vera:VIEWER,otto:OP,ulla:USER",
                                           passwords_file=str(root / "passwords.json")), say=said.append).start()
        try:
            running.said = said
            running.passwords_path = root / "passwords.json"
            yield running
        finally:
            running.stop()


def _client(system, username: str, password: str) -> af.ApiClient:
    request = urllib.request.Request(f"{system.api.url}/auth/token", method="POST",
                                     headers={"Content-Type": "application/json"},
                                     data=json.dumps({"username": username, "password": password}).encode())
    token = json.load(urllib.request.urlopen(request, timeout=30))["access_token"]
    return af.ApiClient(af.Configuration(host=system.api.url, access_token=token))


@pytest.mark.slow
def test_a_viewer_logs_in_with_the_official_client_and_reads_but_cannot_change(system) -> None:
    with _client(system, "vera", "vera-password") as api:
        assert DAGApi(api).get_dags().total_entries == 0
        assert [p.name for p in PoolApi(api).get_pools().pools] == ["default_pool"]
        with pytest.raises(ForbiddenException):
            PoolApi(api).post_pool(PoolBody(name="vera_pool", slots=1))
        with pytest.raises(ForbiddenException):
            DagRunApi(api).trigger_dag_run("any", TriggerDAGRunPostBody(logical_date=None))


def test_an_op_edits_pools(system) -> None:
    with _client(system, "otto", "otto-password") as api:
        assert PoolApi(api).post_pool(PoolBody(name="otto_pool", slots=3)).slots == 3


def test_without_a_valid_token_the_gateway_answers_401(system) -> None:
    with af.ApiClient(af.Configuration(host=system.api.url)) as api, pytest.raises(UnauthorizedException) as raised:
        DAGApi(api).get_dags()
    assert json.loads(raised.value.body) == {"detail": "Not authenticated"}
    with af.ApiClient(af.Configuration(host=system.api.url, access_token="not.a.token")) as api, \
            pytest.raises(UnauthorizedException):
        DAGApi(api).get_dags()
    with urllib.request.urlopen(f"{system.api.url}/api/v2/monitor/health", timeout=30) as health:
        assert health.status == 200  # open, as on the users API


def test_a_user_without_a_password_gets_one_generated_and_printed(system) -> None:
    generated = json.loads(Path(system.passwords_path).read_text())["ulla"]
    assert f"Password for user 'ulla': {generated}" in system.said
    with _client(system, "ulla", generated) as api:
        assert DAGApi(api).get_dags().total_entries == 0
