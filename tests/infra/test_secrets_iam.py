"""The secrets grants: the KMS key for the metastore, and a configured secrets backend read only under its
prefixes, by the workers (Lambda and Fargate) alone; its settings reach the workers' environment."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from infra.config import PLACEHOLDER_ACCOUNT, PLACEHOLDER_REGION, SecretsSettings, settings_for
from infra.stack import UpdraftStack
from tests.infra.cfn import as_list, function_id, function_role, of_type, render, role_statements
from tests.infra.conftest import ROOT, cdk

SM = "airflow.providers.amazon.aws.secrets.secrets_manager.SecretsManagerBackend"
SSM = "airflow.providers.amazon.aws.secrets.systems_manager.SystemsManagerParameterStoreBackend"
ARN = "arn:aws:{service}:us-east-1:123456789012:{rest}"


def _synth(secrets: SecretsSettings) -> dict:
    app = cdk.App(context=json.loads((ROOT / "cdk.json").read_text())["context"])
    stack = UpdraftStack(app, "Secrets", settings=replace(settings_for("dev"), secrets=secrets),
                         bundle_dependencies=False,
                         env=cdk.Environment(account=PLACEHOLDER_ACCOUNT, region=PLACEHOLDER_REGION))
    return app.synth().get_stack_by_name(stack.stack_name).template["Resources"]


@pytest.fixture(scope="module")
def sm_stack() -> dict:
    return _synth(SecretsSettings(SM, {"connections_prefix": "team/conns", "variables_prefix": "team/vars",
                                       "config_prefix": None, "region_name": "us-east-1"}))


def _granted(resources: dict, role: str, action: str) -> list[str]:
    return sorted(r for s in role_statements(resources, role) if action in as_list(s["Action"])
                  for r in as_list(render(s["Resource"])))


def _task_role(resources: dict) -> str:
    (task,) = of_type(resources, "AWS::ECS::TaskDefinition").values()
    return task["Properties"]["TaskRoleArn"]["Fn::GetAtt"][0]


def test_only_the_workers_read_exactly_the_backend_prefixes(sm_stack):
    expected = [ARN.format(service="secretsmanager", rest="secret:team/conns/*"),
                ARN.format(service="secretsmanager", rest="secret:team/vars/*")]
    readers = {role for role in of_type(sm_stack, "AWS::IAM::Role")
               if _granted(sm_stack, role, "secretsmanager:GetSecretValue")}
    assert readers == {function_role(sm_stack, "worker"), _task_role(sm_stack)}
    for role in readers:
        assert _granted(sm_stack, role, "secretsmanager:GetSecretValue") == expected


def test_the_secrets_key_is_for_the_workers_and_the_api_only(sm_stack):
    (key_id,) = of_type(sm_stack, "AWS::KMS::Key")
    users = {role for role in of_type(sm_stack, "AWS::IAM::Role") if _granted(sm_stack, role, "kms:Decrypt")}
    assert users == {function_role(sm_stack, "worker"), function_role(sm_stack, "api"), _task_role(sm_stack)}
    for role in users:
        assert _granted(sm_stack, role, "kms:Encrypt") == [f"<{key_id}.Arn>"]


def test_the_backend_settings_reach_the_workers_environment(sm_stack):
    worker_env = sm_stack[function_id(sm_stack, "worker")]["Properties"]["Environment"]["Variables"]
    assert worker_env["AIRFLOW__SECRETS__BACKEND"] == SM
    assert json.loads(worker_env["AIRFLOW__SECRETS__BACKEND_KWARGS"])["variables_prefix"] == "team/vars"
    (task,) = of_type(sm_stack, "AWS::ECS::TaskDefinition").values()
    container_env = {e["Name"]: e["Value"] for e in task["Properties"]["ContainerDefinitions"][0]["Environment"]}
    assert container_env["AIRFLOW__SECRETS__BACKEND"] == SM and "UPDRAFT_KMS_KEY" in container_env


def test_ssm_defaults_and_refusals():
    from aws_cdk import Stack

    from infra.constructs.access import read_secrets_backend

    stack = Stack(cdk.App(), "S", env=cdk.Environment(account=PLACEHOLDER_ACCOUNT, region=PLACEHOLDER_REGION))
    (statement,) = read_secrets_backend(stack, SSM, {"variables_prefix": None})
    rendered = stack.resolve(statement.to_statement_json())
    assert rendered["Action"] == "ssm:GetParameter"
    assert render(rendered["Resource"]) == ARN.format(service="ssm", rest="parameter/airflow/connections/*")
    with pytest.raises(ValueError, match="every secret of the account"):
        read_secrets_backend(stack, SSM, {"connections_prefix": "/"})
    with pytest.raises(Exception, match="full_url_mode"):
        read_secrets_backend(stack, SM, {"full_url_mode": True})
