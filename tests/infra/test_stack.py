"""The synthesized template of the dev stack: one synth for the whole module (each costs ~5-7 s)."""

from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
cdk = pytest.importorskip("aws_cdk", reason="the infra extra is not installed (pip install -e '.[infra]')")

from aws_cdk.assertions import Match, Template  # noqa: E402

from infra.config import ENVIRONMENTS, settings_for  # noqa: E402
from infra.stack import UpdraftStack  # noqa: E402
from updraft.store.tables import TABLE  # noqa: E402

SETTINGS = settings_for("dev")


@pytest.fixture(scope="module")
def template() -> Template:
    app = cdk.App()
    stack = UpdraftStack(app, "Updraft-test", settings=SETTINGS, bundle_dependencies=False,
                         env=cdk.Environment(account="123456789012", region="us-east-1"))
    return Template.from_stack(stack)


@pytest.fixture(scope="module")
def resources(template: Template) -> dict:
    return template.to_json()["Resources"]


def _logical_id(resources: dict, type_: str, handler: str) -> str:
    (found,) = [k for k, v in resources.items()
                if v["Type"] == type_ and v["Properties"].get("Handler") == handler]
    return found


def _keys(pk: str, sk: str) -> list[dict]:
    return [{"AttributeName": pk, "KeyType": "HASH"}, {"AttributeName": sk, "KeyType": "RANGE"}]


def test_table_matches_the_store_spec(template: Template) -> None:
    gsis = [{"IndexName": ix.name, "KeySchema": _keys(ix.partition_key.name, ix.sort_key.name),
             "Projection": {"ProjectionType": ix.projection}} for ix in TABLE.global_indexes]
    lsis = [{"IndexName": ix.name, "KeySchema": _keys(ix.partition_key.name, ix.sort_key.name),
             "Projection": {"ProjectionType": ix.projection}} for ix in TABLE.local_indexes]
    template.resource_count_is("AWS::DynamoDB::Table", 1)
    template.has_resource_properties("AWS::DynamoDB::Table", {
        "KeySchema": _keys(TABLE.partition_key.name, TABLE.sort_key.name),
        "AttributeDefinitions": Match.array_equals(
            [{"AttributeName": a.name, "AttributeType": a.type} for a in TABLE.key_attributes()]),
        "GlobalSecondaryIndexes": Match.array_equals(gsis),
        "LocalSecondaryIndexes": Match.array_equals(lsis),
        "BillingMode": TABLE.billing_mode,
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
    })


def test_dev_data_is_destroyed_with_the_stack(template: Template) -> None:
    template.has_resource("AWS::DynamoDB::Table", {"DeletionPolicy": "Delete"})
    assert ENVIRONMENTS["prod"].retain_data and ENVIRONMENTS["staging"].retain_data


def test_bucket_is_versioned_private_and_tls_only(template: Template) -> None:
    template.has_resource_properties("AWS::S3::Bucket", {
        "VersioningConfiguration": {"Status": "Enabled"},
        "PublicAccessBlockConfiguration": {"BlockPublicAcls": True, "BlockPublicPolicy": True,
                                           "IgnorePublicAcls": True, "RestrictPublicBuckets": True},
    })
    template.has_resource_properties("AWS::S3::BucketPolicy", {"PolicyDocument": {"Statement": Match.array_with([
        Match.object_like({"Effect": "Deny", "Action": "s3:*", "Principal": {"AWS": "*"},
                           "Condition": {"Bool": {"aws:SecureTransport": "false"}}}),
    ])}})


def test_dag_file_notifications_go_to_the_parser(template: Template, resources: dict) -> None:
    parser = _logical_id(resources, "AWS::Lambda::Function", "functions.parser.handler.handler")
    rules = [{"Name": "suffix", "Value": ".py"}, {"Name": "prefix", "Value": "dags/"}]
    template.has_resource_properties("Custom::S3BucketNotifications", {"NotificationConfiguration": {
        "LambdaFunctionConfigurations": Match.array_equals([
            {"Events": [event], "Filter": {"Key": {"FilterRules": rules}},
             "LambdaFunctionArn": {"Fn::GetAtt": [parser, "Arn"]}}
            for event in ("s3:ObjectCreated:*", "s3:ObjectRemoved:*")
        ])}})


def test_tick_rule_targets_the_scheduler(template: Template, resources: dict) -> None:
    scheduler = _logical_id(resources, "AWS::Lambda::Function", "functions.scheduler.handler.handler")
    template.has_resource_properties("AWS::Events::Rule", {
        "ScheduleExpression": f"rate({SETTINGS.tick_minutes} minute{'s' if SETTINGS.tick_minutes > 1 else ''})",
        "State": "ENABLED",
        "Targets": [Match.object_like({"Arn": {"Fn::GetAtt": [scheduler, "Arn"]}})],
    })


def test_functions_runtime_handlers_and_environment(template: Template, resources: dict) -> None:
    functions = {v["Properties"]["Handler"]: v["Properties"] for v in resources.values()
                 if v["Type"] == "AWS::Lambda::Function"
                 and v["Properties"].get("Handler", "").startswith("functions.")}
    assert set(functions) == {f"functions.{n}.handler.handler" for n in ("parser", "scheduler", "worker")}
    for props in functions.values():
        assert props["Runtime"] == "python3.11"
        env = props["Environment"]["Variables"]
        assert {"UPDRAFT_TABLE", "UPDRAFT_BUCKET", "UPDRAFT_DAGS_PREFIX", "UPDRAFT_TICK_SECONDS"} <= set(env)
        assert "AWS_REGION" not in env  # reserved: Lambda sets it
    assert "UPDRAFT_WORKER_FUNCTION" in functions["functions.scheduler.handler.handler"]["Environment"]["Variables"]


def test_worker_async_invokes_have_a_dlq_and_bounded_retries(template: Template, resources: dict) -> None:
    worker = _logical_id(resources, "AWS::Lambda::Function", "functions.worker.handler.handler")
    (dlq,) = [k for k, v in resources.items() if v["Type"] == "AWS::SQS::Queue"]
    template.has_resource_properties("AWS::Lambda::EventInvokeConfig", {
        "FunctionName": {"Ref": worker},
        "MaximumRetryAttempts": SETTINGS.worker_retry_attempts,
        "MaximumEventAgeInSeconds": SETTINGS.worker_max_event_age_seconds,
        "DestinationConfig": {"OnFailure": {"Destination": {"Fn::GetAtt": [dlq, "Arn"]}}},
    })
    assert 0 <= SETTINGS.worker_retry_attempts <= 2
    template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "ApproximateNumberOfMessagesVisible", "Namespace": "AWS/SQS",
        "Dimensions": [{"Name": "QueueName", "Value": {"Fn::GetAtt": [dlq, "QueueName"]}}],
        "Threshold": 1, "ComparisonOperator": "GreaterThanOrEqualToThreshold",
    })


def test_log_groups_have_retention(template: Template) -> None:
    template.resource_properties_count_is("AWS::Logs::LogGroup",
                                          {"RetentionInDays": SETTINGS.log_retention_days}, 3)


# -- least privilege -----------------------------------------------------------------------------------------

# Statements allowed to name "*" because AWS has no resource-level permission for their actions. None so far:
# X-Ray (xray:PutTraceSegments) or CloudWatch PutMetricData would go here, each with its reason.
WILDCARD_ALLOWED: set[tuple[str, ...]] = set()


def _statements(resources: dict, handler: str) -> list[dict]:
    fn = resources[_logical_id(resources, "AWS::Lambda::Function", handler)]
    role = fn["Properties"]["Role"]["Fn::GetAtt"][0]
    out = []
    for v in resources.values():
        if v["Type"] == "AWS::IAM::Policy" and {"Ref": role} in v["Properties"]["Roles"]:
            out.extend(v["Properties"]["PolicyDocument"]["Statement"])
    # Inline policies on the role itself count too.
    for policy in resources[role]["Properties"].get("Policies", []):
        out.extend(policy["PolicyDocument"]["Statement"])
    return out


def _as_list(value: object) -> list:
    return value if isinstance(value, list) else [value]


@pytest.mark.parametrize("name", ["parser", "scheduler", "worker"])
def test_every_statement_names_specific_resources(resources: dict, name: str) -> None:
    statements = _statements(resources, f"functions.{name}.handler.handler")
    assert statements
    for statement in statements:
        assert statement["Effect"] == "Allow"
        actions = tuple(sorted(_as_list(statement["Action"])))
        assert not any(a == "*" or a.endswith(":*") for a in actions), statement
        for resource in _as_list(statement["Resource"]):
            if resource == "*":
                assert actions in WILDCARD_ALLOWED, f"{name}: {statement}"
            else:
                # Every resource is an attribute of (or a path under) a resource of this stack.
                assert "Fn::GetAtt" in json.dumps(resource) or "Ref" in json.dumps(resource), statement
    # Managed policies: only the basic execution role (CloudWatch Logs).
    fn = resources[_logical_id(resources, "AWS::Lambda::Function", f"functions.{name}.handler.handler")]
    role = resources[fn["Properties"]["Role"]["Fn::GetAtt"][0]]
    managed = json.dumps(role["Properties"].get("ManagedPolicyArns", []))
    assert "AWSLambdaBasicExecutionRole" in managed and managed.count("arn:") == 1


def _s3_object_prefixes(statements: list[dict], action: str) -> set[str]:
    out = set()
    for statement in statements:
        if action in _as_list(statement["Action"]):
            for resource in _as_list(statement["Resource"]):
                text = json.dumps(resource)
                if "Bucket" in text and "/" in text:
                    out.add(resource["Fn::Join"][1][-1].lstrip("/"))
    return out


def test_only_parser_and_worker_read_dag_code(resources: dict) -> None:
    readers = {name for name in ("parser", "scheduler", "worker")
               if "dags/*" in _s3_object_prefixes(_statements(resources, f"functions.{name}.handler.handler"),
                                                  "s3:GetObject")}
    assert readers == {"parser", "worker"}
    scheduler = _statements(resources, "functions.scheduler.handler.handler")
    assert _s3_object_prefixes(scheduler, "s3:GetObject") == {"store/*"}
    assert not any("s3:ListBucket" in _as_list(s["Action"]) for s in scheduler)


def test_every_environment_has_valid_settings() -> None:
    from infra.constructs.compute import _RETENTION

    for settings in ENVIRONMENTS.values():
        assert settings.log_retention_days in _RETENTION
        assert 60 <= settings.worker_max_event_age_seconds <= 21600
        assert settings.worker.timeout_seconds <= 900
    with pytest.raises(ValueError, match="unknown environment"):
        settings_for("qa")
