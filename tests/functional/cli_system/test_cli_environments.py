"""`updraft env`, `--env`/`UPDRAFT_ENV` and `updraft login`: the CLI operating an environment other than local
mode, through its API only.

The "deployed" environment is the test's moto environment served by a second local API Gateway that records
the headers each request arrived with; a moto CloudFormation stack's outputs point at it, as a deployed stack's
point at API Gateway on AWS. The local gateway does not check SigV4 (AWS does), so the tests check the
Authorization header has SigV4's shape, for the user's credentials, region and ``execute-api``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass

import boto3
import pytest

from tests.functional.cli_system.cli_helpers import LocalSystem, api_handler, chain_dag, invoke
from updraft.cli.environments import Environments
from updraft.local.api_gateway import LocalApiGateway
from updraft.services import Services

pytestmark = pytest.mark.slow

REGION = "us-east-1"
ACCESS_KEY = "AKIAUPDRAFTTEST"
SIGV4 = re.compile(rf"^AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/\d{{8}}/{REGION}/execute-api/aws4_request, "
                   r"SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$")


@dataclass
class Deployed:
    """The test's environment behind its own gateway, as a deployed one is reached."""

    system: LocalSystem
    url: str
    headers: list[dict[str, str]]  # of every request the gateway served, in order

    @property
    def bucket(self) -> str:
        bucket = self.system.services.config.bucket
        assert bucket is not None
        return bucket


def _serve(config, headers: list[dict[str, str]]) -> LocalApiGateway:
    handler = api_handler(Services(config))

    def recording(event: dict) -> dict:
        headers.append(event["headers"])
        return handler(event)

    return LocalApiGateway(recording)


@pytest.fixture
def deployed(local_system: LocalSystem, aws_server, monkeypatch: pytest.MonkeyPatch) -> Iterator[Deployed]:
    # The user's AWS configuration: what `env add --stack`, SigV4 and `dags upload` use (moto is their AWS).
    monkeypatch.setenv("AWS_ENDPOINT_URL", aws_server.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("UPDRAFT_ENV", raising=False)
    headers: list[dict[str, str]] = []
    gateway = _serve(local_system.services.config, headers)
    try:
        yield Deployed(local_system, gateway.url, headers)
    finally:
        gateway.close()


def _stack(deployed: Deployed, name: str, users_url: str = "https://users.example/") -> None:
    """A stack with the outputs infra/stack.py declares, pointing at the deployed environment."""
    outputs = {"ApiUrl": deployed.url + "/", "UsersApiUrl": users_url, "BucketName": deployed.bucket,
               "DagsPrefix": "dags/", "Region": REGION, "TableName": "t"}
    template = {"Resources": {"Placeholder": {"Type": "AWS::SQS::Queue"}},
                "Outputs": {key: {"Value": value} for key, value in outputs.items()}}
    boto3.client("cloudformation").create_stack(StackName=name, TemplateBody=json.dumps(template))


def _json(*args: str):
    result = invoke(*args, "-o", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_an_environment_from_a_stack_is_operated_with_sigv4(deployed, tmp_path):
    deployed.system.add_dags(chain_dag("chain", schedule=None), unpause=False)  # new DAGs start paused
    _stack(deployed, "Updraft-dev")
    added = invoke("env", "add", "dev", "--stack", "Updraft-dev")
    assert added.exit_code == 0, added.output
    assert stat.S_IMODE(Environments.path().stat().st_mode) == 0o600

    assert [d["dag_id"] for d in _json("--env", "dev", "dags", "list")] == ["chain"]
    assert _json("--env", "dev", "dags", "unpause", "chain") == [{"dag_id": "chain", "is_paused": False}]
    assert deployed.system.store.get_dag_meta("chain").is_paused is False
    [run] = _json("--env", "dev", "dags", "trigger", "chain", "-r", "remote")
    assert run["dag_run_id"] == "remote" and deployed.system.store.get_run("chain", "remote") is not None
    assert "default_pool" in {p["pool"] for p in _json("--env", "dev", "pools", "list")}
    assert deployed.headers and all(SIGV4.match(h.get("Authorization", "")) for h in deployed.headers)
    assert all(h.get("X-Amz-Date") for h in deployed.headers)

    # `dags upload` is an S3 put to the stack's bucket, with the user's credentials.
    (tmp_path / "new.py").write_text("# new\n")
    uploaded = invoke("--env", "dev", "dags", "upload", str(tmp_path / "new.py"))
    assert uploaded.exit_code == 0, uploaded.output
    s3 = deployed.system.services.client("s3")
    assert s3.get_object(Bucket=deployed.bucket, Key="dags/new.py")["Body"].read() == b"# new\n"

    # A token environment is the users API (the Cognito authorizer's), not the IAM one.
    assert invoke("env", "add", "users", "--stack", "Updraft-dev", "--auth", "token").exit_code == 0
    assert Environments.load().environments["users"].url == "https://users.example"

    missing = invoke("env", "add", "other", "--stack", "Nowhere")
    assert missing.exit_code == 1 and missing.stderr.startswith("Error: could not read stack 'Nowhere'")


def test_updraft_env_and_env_use_choose_and_local_goes_back(deployed, monkeypatch):
    deployed.system.add_dags(chain_dag("chain", schedule=None))
    assert invoke("env", "add", "dev", "--url", deployed.url, "--region", REGION).exit_code == 0
    monkeypatch.setenv("UPDRAFT_ENV", "dev")
    assert [d["dag_id"] for d in _json("dags", "list")] == ["chain"]
    served = len(deployed.headers)
    assert served > 0
    # --env beats UPDRAFT_ENV; `local` is the running local mode (its own gateway: this one sees nothing).
    assert [d["dag_id"] for d in _json("--env", "local", "dags", "list")] == ["chain"]
    assert len(deployed.headers) == served
    monkeypatch.delenv("UPDRAFT_ENV")
    assert invoke("env", "use", "dev").exit_code == 0
    _json("dags", "list")
    assert len(deployed.headers) > served
    unknown = invoke("--env", "nope", "dags", "list")
    assert unknown.exit_code == 1
    assert unknown.stderr == "Error: unknown environment 'nope'; known environments: dev (and local)\n"
    rows = _json("env", "list")
    assert [(r["name"], r["default"], r["url"], r["auth"]) for r in rows] == [("dev", True, deployed.url, "iam")]
    assert invoke("env", "remove", "dev").exit_code == 0
    assert _json("env", "list") == [] and Environments.load().current is None


def test_with_no_local_mode_the_error_lists_the_environments(no_system):
    assert invoke("env", "add", "prod", "--url", "https://abc.execute-api.eu-west-1.amazonaws.com/prod").exit_code == 0
    [found] = Environments.load().environments.values()
    assert found.url.endswith("/prod")
    result = invoke("pools", "list")
    assert result.exit_code == 1
    assert result.stderr == ("Error: no local Updraft is running (start one with `updraft local`); or choose an "
                             "environment with --env NAME (known environments: prod (and local))\n")


@pytest.mark.parametrize(("args", "message"), [
    (("--stack", "S", "--url", "http://x"), "give exactly one of --stack and --url"),
    (("--url", "ftp://x"), "is not an http(s) URL"),
])
def test_env_add_refuses_what_it_cannot_use(no_system, args, message):
    result = invoke("env", "add", "dev", *args)
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_token_environment_needs_login_then_sends_the_token(deployed, tmp_path):
    deployed.system.add_dags(chain_dag("chain", schedule=None))
    # Local mode's /auth/token issues tokens (Airflow's all-admins mode); a deployed one answers from its users.
    # The test's environment is not local mode's: its /auth/token issues nothing (on AWS, IAM signs instead).
    assert invoke("env", "add", "dev", "--url", deployed.url).exit_code == 0
    refused = invoke("login", "--env", "dev", "-u", "admin", "-p", "pw")
    assert refused.exit_code == 1
    [line] = refused.stderr.splitlines()
    assert line.startswith("Error: login to dev failed: ") and "(HTTP 403)" in line
    assert Environments.load().environments["dev"].token is None

    config = dataclasses.replace(deployed.system.services.config, local_compute=str(tmp_path / "no-socket"))
    headers: list[dict[str, str]] = []
    gateway = _serve(config, headers)
    try:
        assert invoke("env", "add", "tok", "--url", gateway.url, "--auth", "token").exit_code == 0
        before = invoke("--env", "tok", "dags", "list")
        assert before.exit_code == 1
        assert before.stderr == "Error: environment 'tok' takes a token: run `updraft login --env tok -u USER`\n"
        login = invoke("login", "--env", "tok", "-u", "admin", "-p", "secret")
        assert login.exit_code == 0, login.output
        assert login.stdout == "Logged in to tok as admin\n"
        assert "Authorization" not in headers[-1]  # the password is the credential: nothing is signed
        token = Environments.load().environments["tok"].token
        assert token and stat.S_IMODE(Environments.path().stat().st_mode) == 0o600
        assert [d["dag_id"] for d in _json("--env", "tok", "dags", "list")] == ["chain"]
        assert headers[-1]["Authorization"] == f"Bearer {token}"
        assert "secret" not in Environments.path().read_text()
        listed = invoke("env", "list", "-o", "json")
        assert token not in listed.stdout
        assert {r["name"]: r["logged_in"] for r in json.loads(listed.stdout)} == {"dev": False, "tok": True}
    finally:
        gateway.close()
