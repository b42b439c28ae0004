"""``UpdraftEnvironment`` embedded in someone else's environment-agnostic stack (this module's one synth).

Such a stack's account and region are deploy-time tokens: the bucket then gets a CDK-generated name (a
``names.bucket`` built from tokens could not be checked at synth), everything else keeps local mode's names.
"""

from __future__ import annotations

import pytest

cdk = pytest.importorskip("aws_cdk")

from infra.config import settings_for  # noqa: E402
from infra.constructs import UpdraftEnvironment  # noqa: E402
from tests.infra.cfn import of_type  # noqa: E402
from updraft.resources import ResourceNames  # noqa: E402


@pytest.fixture(scope="module")
def resources() -> dict:
    app = cdk.App()
    stack = cdk.Stack(app, "TheirStack")  # no env: account and region unresolved
    UpdraftEnvironment(stack, "Orchestrator", settings=settings_for("staging"), bundle_dependencies=False)
    return app.synth().get_stack_by_name("TheirStack").template["Resources"]


def test_agnostic_stack_gets_a_generated_bucket_name_and_fixed_other_names(resources: dict) -> None:
    names = ResourceNames("staging")
    (bucket,) = of_type(resources, "AWS::S3::Bucket").values()
    assert "BucketName" not in bucket["Properties"]
    (table,) = of_type(resources, "AWS::DynamoDB::Table").values()
    assert table["Properties"]["TableName"] == names.table
    assert {f["Properties"].get("FunctionName") for f in of_type(resources, "AWS::Lambda::Function").values()
            } >= {names.parser_function, names.scheduler_function, names.worker_function, names.api_function}
    assert sorted(g["Properties"]["LogGroupName"] for g in of_type(resources, "AWS::Logs::LogGroup").values()
                  if "LogGroupName" in g["Properties"]) == sorted([names.task_log_group, names.deferral_log_group])
    # Name-built ARNs resolve the account and region at deploy time.
    (task_role_policy,) = [p for p in of_type(resources, "AWS::IAM::Policy").values()
                           if "TaskRole" in p["Properties"]["Roles"][0]["Ref"]]
    (invoke,) = [s for s in task_role_policy["Properties"]["PolicyDocument"]["Statement"]
                 if s.get("Sid") == "InvokeWorker"]
    parts = invoke["Resource"]["Fn::Join"][1]
    assert {"Ref": "AWS::Region"} in parts and {"Ref": "AWS::AccountId"} in parts
