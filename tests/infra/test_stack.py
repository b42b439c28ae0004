"""The synthesized dev stack's resources (the session's one synth, tests/infra/conftest.py)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Match, Template

from infra.config import API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS, ENVIRONMENTS, settings_for
from infra.constructs.compute import RETENTION
from infra.constructs.data import UpdraftData
from infra.constructs.fargate import DOCKERFILE
from infra.packages import RUNTIME_LOCK, read_lock
from tests.infra.cfn import function_id, of_type, render
from updraft.config import UpdraftConfig
from updraft.executors.fargate import DEFAULT_COMMAND
from updraft.resources import ResourceNames
from updraft.store.tables import TABLE

SETTINGS = settings_for("dev")
NAMES = ResourceNames("dev", "123456789012", "us-east-1")
FUNCTIONS = ("parser", "scheduler", "worker", "api")


def _keys(pk: str, sk: str) -> list[dict]:
    return [{"AttributeName": pk, "KeyType": "HASH"}, {"AttributeName": sk, "KeyType": "RANGE"}]


def _function(synth, name: str) -> dict:
    return synth.resources[function_id(synth.resources, name)]["Properties"]


def _env(synth, name: str) -> dict[str, str]:
    return render(_function(synth, name)["Environment"]["Variables"])


def _only(synth, type_: str) -> tuple[str, dict]:
    ((logical_id, resource),) = of_type(synth.resources, type_).items()
    return logical_id, resource["Properties"]


# -- data --------------------------------------------------------------------------------------------------

def test_table_matches_the_store_spec(synth) -> None:
    gsis = [{"IndexName": ix.name, "KeySchema": _keys(ix.partition_key.name, ix.sort_key.name),
             "Projection": {"ProjectionType": ix.projection}} for ix in TABLE.global_indexes]
    lsis = [{"IndexName": ix.name, "KeySchema": _keys(ix.partition_key.name, ix.sort_key.name),
             "Projection": {"ProjectionType": ix.projection}} for ix in TABLE.local_indexes]
    synth.template.resource_count_is("AWS::DynamoDB::Table", 1)
    synth.template.has_resource_properties("AWS::DynamoDB::Table", {
        "TableName": NAMES.table,
        "KeySchema": _keys(TABLE.partition_key.name, TABLE.sort_key.name),
        "AttributeDefinitions": Match.array_equals(
            [{"AttributeName": a.name, "AttributeType": a.type} for a in TABLE.key_attributes()]),
        "GlobalSecondaryIndexes": Match.array_equals(gsis),
        "LocalSecondaryIndexes": Match.array_equals(lsis),
        "BillingMode": TABLE.billing_mode,
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
    })


def test_the_table_deletes_expired_task_state_by_ttl(synth) -> None:
    synth.template.has_resource_properties("AWS::DynamoDB::Table", {
        "TimeToLiveSpecification": {"AttributeName": TABLE.ttl_attribute, "Enabled": True}})


def test_dev_data_is_destroyed_with_the_stack(synth) -> None:
    synth.template.has_resource("AWS::DynamoDB::Table", {"DeletionPolicy": "Delete"})
    synth.template.has_resource("AWS::S3::Bucket", {"DeletionPolicy": "Delete"})
    assert ENVIRONMENTS["prod"].retain_data and ENVIRONMENTS["staging"].retain_data


def test_a_bucket_deleted_with_the_stack_is_emptied_first(synth) -> None:
    """A versioned bucket holding any version or delete marker cannot be deleted: without emptying it, `cdk
    destroy` of dev ends in DELETE_FAILED once a DAG was uploaded. CDK's auto-delete custom resource empties it
    (its provider may delete this bucket's objects, by the bucket policy); a retained bucket is never emptied."""
    bucket_id, _ = _only(synth, "AWS::S3::Bucket")
    (cleaner,) = of_type(synth.resources, "Custom::S3AutoDeleteObjects").values()
    assert cleaner["Properties"]["BucketName"] == {"Ref": bucket_id}
    _, policy = _only(synth, "AWS::S3::BucketPolicy")
    (grant,) = [s for s in policy["PolicyDocument"]["Statement"] if s["Effect"] == "Allow"]
    assert "s3:DeleteObject*" in grant["Action"]
    assert render(grant["Resource"]) == [f"<{bucket_id}.Arn>", f"<{bucket_id}.Arn>/*"]  # this bucket only

    stack = cdk.Stack(cdk.App(), "Retained", env=cdk.Environment(account="123456789012", region="us-east-1"))
    UpdraftData(stack, "Data", retain=True, names=ResourceNames("prod", "123456789012", "us-east-1"))
    retained = Template.from_stack(stack)
    retained.has_resource("AWS::S3::Bucket", {"DeletionPolicy": "Retain"})
    retained.resource_count_is("Custom::S3AutoDeleteObjects", 0)


def test_bucket_is_named_versioned_private_and_tls_only(synth) -> None:
    synth.template.has_resource_properties("AWS::S3::Bucket", {
        "BucketName": NAMES.bucket,  # a concrete account and region: local mode's name
        "VersioningConfiguration": {"Status": "Enabled"},
        "PublicAccessBlockConfiguration": {"BlockPublicAcls": True, "BlockPublicPolicy": True,
                                           "IgnorePublicAcls": True, "RestrictPublicBuckets": True},
    })
    synth.template.has_resource_properties("AWS::S3::BucketPolicy", {"PolicyDocument": {"Statement": Match.array_with([
        Match.object_like({"Effect": "Deny", "Action": "s3:*", "Principal": {"AWS": "*"},
                           "Condition": {"Bool": {"aws:SecureTransport": "false"}}}),
    ])}})


# -- functions and triggers --------------------------------------------------------------------------------

def test_functions_are_named_as_in_local_mode(synth) -> None:
    names = {name: _function(synth, name)["FunctionName"] for name in FUNCTIONS}
    assert names == {"parser": NAMES.parser_function, "scheduler": NAMES.scheduler_function,
                     "worker": NAMES.worker_function, "api": NAMES.api_function}
    synth.template.has_resource_properties("AWS::Events::Rule", {"Name": NAMES.tick_rule})
    synth.template.has_resource_properties("AWS::SQS::Queue", {"QueueName": NAMES.worker_dlq})


def test_dag_file_notifications_go_to_the_parser(synth) -> None:
    parser = function_id(synth.resources, "parser")
    rules = [{"Name": "suffix", "Value": ".py"}, {"Name": "prefix", "Value": "dags/"}]
    synth.template.has_resource_properties("Custom::S3BucketNotifications", {"NotificationConfiguration": {
        "LambdaFunctionConfigurations": Match.array_equals([
            {"Events": [event], "Filter": {"Key": {"FilterRules": rules}},
             "LambdaFunctionArn": {"Fn::GetAtt": [parser, "Arn"]}}
            for event in ("s3:ObjectCreated:*", "s3:ObjectRemoved:*")
        ])}})


def test_tick_rule_targets_the_scheduler(synth) -> None:
    scheduler = function_id(synth.resources, "scheduler")
    synth.template.has_resource_properties("AWS::Events::Rule", {
        "ScheduleExpression": f"rate({SETTINGS.tick_minutes} minute{'s' if SETTINGS.tick_minutes > 1 else ''})",
        "State": "ENABLED",
        "Targets": [Match.object_like({"Arn": {"Fn::GetAtt": [scheduler, "Arn"]}})],
    })


def test_functions_runtime_handlers_and_settings(synth) -> None:
    for name in FUNCTIONS:
        props = _function(synth, name)
        fs = getattr(SETTINGS, name)
        assert (props["Runtime"], props["MemorySize"], props["Timeout"]) == ("python3.11", fs.memory_mib,
                                                                            fs.timeout_seconds)
        env = _env(synth, name)
        assert env["UPDRAFT_TABLE"] == f"<{_only(synth, 'AWS::DynamoDB::Table')[0]}>"
        assert env["UPDRAFT_METRICS_NAMESPACE"] == "Updraft/dev"
        assert env["POWERTOOLS_SERVICE_NAME"] == f"updraft-{name}"
        assert "AWS_REGION" not in env  # reserved: Lambda sets it


def _config(env: dict[str, str]) -> UpdraftConfig:
    return UpdraftConfig.from_env({**env, "AWS_REGION": "us-east-1"})


def test_api_function_times_out_before_api_gateway(synth) -> None:
    """At API Gateway's 29 s the caller would get the gateway's 504 and the function's own timeout error (logged,
    with its request id) would be masked: every environment's API function stops first, and a setting that does
    not is refused."""
    assert API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS == 29
    assert _function(synth, "api")["Timeout"] == 25
    assert all(settings.api.timeout_seconds < 29 for settings in ENVIRONMENTS.values())
    with pytest.raises(ValueError, match=r"API function's timeout \(29 s\) must be below"):
        dataclasses.replace(SETTINGS, api=dataclasses.replace(SETTINGS.api, timeout_seconds=29))


def test_the_configuration_is_hidden_unless_the_environment_exposes_it(synth, tmp_path) -> None:
    """Airflow's [api] expose_config: off by default (GET /config is a 403), on where the settings say so."""
    from infra.stack import UpdraftStack
    from tests.infra.conftest import ROOT

    assert UpdraftConfig.from_env(_env(synth, "api")).expose_config is False
    app = cdk.App(context=json.loads((ROOT / "cdk.json").read_text())["context"], outdir=str(tmp_path))
    UpdraftStack(app, "Exposed", settings=dataclasses.replace(SETTINGS, expose_config=True), bundle_dependencies=False,
                 env=cdk.Environment(account="123456789012", region="us-east-1"))
    exposed = app.synth().get_stack_by_name("Exposed").template["Resources"]
    api = exposed[function_id(exposed, "api")]["Properties"]
    assert UpdraftConfig.from_env(render(api["Environment"]["Variables"])).expose_config is True


def test_dispatchers_have_both_executors_and_the_others_none(synth) -> None:
    subnets = sorted(k for k, v in of_type(synth.resources, "AWS::EC2::Subnet").items())
    (security_group,) = of_type(synth.resources, "AWS::EC2::SecurityGroup")
    cluster, _ = _only(synth, "AWS::ECS::Cluster")
    for name in ("scheduler", "worker"):  # the worker's mini scheduler dispatches too
        config = _config(_env(synth, name))
        assert config.worker_function == NAMES.worker_function
        assert config.fargate_configured
        assert (config.ecs_cluster, config.ecs_task_definition, config.ecs_container) == (
            f"<{cluster}>", NAMES.ecs_task_family, NAMES.ecs_container)
        assert sorted(config.ecs_subnets) == [f"<{s}>" for s in subnets]
        assert config.ecs_security_groups == (f"<{security_group}.GroupId>",)
        assert config.ecs_public_ip  # public subnets without NAT
    for name in ("parser", "api"):
        config = _config(_env(synth, name))
        assert config.worker_function is None and not config.fargate_configured
    api = _config(_env(synth, "api"))  # the API reads store/ objects and nudges the scheduler after a trigger
    assert api.bucket is not None and api.scheduler_function == NAMES.scheduler_function


def test_worker_async_invokes_have_a_dlq_and_bounded_retries(synth) -> None:
    worker = function_id(synth.resources, "worker")
    dlq, _ = _only(synth, "AWS::SQS::Queue")
    synth.template.has_resource_properties("AWS::Lambda::EventInvokeConfig", {
        "FunctionName": {"Ref": worker},
        "MaximumRetryAttempts": SETTINGS.worker_retry_attempts,
        "MaximumEventAgeInSeconds": SETTINGS.worker_max_event_age_seconds,
        "DestinationConfig": {"OnFailure": {"Destination": {"Fn::GetAtt": [dlq, "Arn"]}}},
    })
    assert 0 <= SETTINGS.worker_retry_attempts <= 2
    synth.template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "ApproximateNumberOfMessagesVisible", "Namespace": "AWS/SQS",
        "Dimensions": [{"Name": "QueueName", "Value": {"Fn::GetAtt": [dlq, "QueueName"]}}],
        "Threshold": 1, "ComparisonOperator": "GreaterThanOrEqualToThreshold",
    })


def test_import_errors_alarm_watches_the_parsers_metric(synth) -> None:
    parser = _env(synth, "parser")
    synth.template.has_resource_properties("AWS::CloudWatch::Alarm", {
        "MetricName": "ImportErrors", "Namespace": parser["UPDRAFT_METRICS_NAMESPACE"],
        "Dimensions": [{"Name": "service", "Value": parser["POWERTOOLS_SERVICE_NAME"]}],
        "Statistic": "Sum", "Threshold": 1, "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "TreatMissingData": "notBreaching",
    })


def test_every_function_and_the_state_machine_log_with_retention(synth) -> None:
    groups = of_type(synth.resources, "AWS::Logs::LogGroup")
    assert all(g["Properties"]["RetentionInDays"] == SETTINGS.log_retention_days for g in groups.values())
    used = {_function(synth, name)["LoggingConfig"]["LogGroup"]["Ref"] for name in (*FUNCTIONS, "asset_events",
                                                                                 "trigger_check")}
    _, machine = _only(synth, "AWS::StepFunctions::StateMachine")
    used.add(machine["LoggingConfiguration"]["Destinations"][0]["CloudWatchLogsLogGroup"]["LogGroupArn"]
             ["Fn::GetAtt"][0])
    _, task = _only(synth, "AWS::ECS::TaskDefinition")
    used.add(task["ContainerDefinitions"][0]["LogConfiguration"]["Options"]["awslogs-group"]["Ref"])
    used.add(_env(synth, "worker")["UPDRAFT_TASK_LOG_GROUP"].strip("<>"))
    assert used == set(groups)  # nine groups, each used: no function writes to an unmanaged group


def test_state_machine_logs_to_a_vended_logs_group(synth) -> None:
    """Step Functions' log delivery to a group outside /aws/vendedlogs/ adds to the account's CloudWatch Logs
    resource policy (5,120 characters in all): AWS recommends the prefix, which needs no entry there."""
    _, machine = _only(synth, "AWS::StepFunctions::StateMachine")
    group = machine["LoggingConfiguration"]["Destinations"][0]["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    name = synth.resources[group]["Properties"]["LogGroupName"]
    assert name == NAMES.deferral_log_group == "/aws/vendedlogs/states/updraft-dev-deferrals"


def test_task_logs_have_their_own_named_group_given_to_the_workers(synth) -> None:
    ((group_id, group),) = [(k, v) for k, v in of_type(synth.resources, "AWS::Logs::LogGroup").items()
                            if v["Properties"].get("LogGroupName") == NAMES.task_log_group]
    assert group["Properties"]["RetentionInDays"] == SETTINGS.log_retention_days
    assert group["DeletionPolicy"] == "Delete"  # dev: destroyed with the stack, like the other log groups
    # The worker writes there; the scheduler carries it to the Fargate tasks it starts (RunTask's environment).
    for name in ("scheduler", "worker"):
        assert _config(_env(synth, name)).task_log_group == f"<{group_id}>"
    _, task = _only(synth, "AWS::ECS::TaskDefinition")
    container_env = {e["Name"]: render(e["Value"]) for e in task["ContainerDefinitions"][0]["Environment"]}
    assert container_env["UPDRAFT_TASK_LOG_GROUP"] == f"<{group_id}>"
    assert "UPDRAFT_TASK_LOG_GROUP" not in _env(synth, "parser")  # it runs no tries
    assert _config(_env(synth, "api")).task_log_group == f"<{group_id}>"  # its logs route reads them


# -- Fargate -----------------------------------------------------------------------------------------------

def test_vpc_is_public_subnets_without_nat(synth) -> None:
    synth.template.resource_count_is("AWS::EC2::NatGateway", 0)
    subnets = of_type(synth.resources, "AWS::EC2::Subnet")
    assert len(subnets) == 2 and all(s["Properties"]["MapPublicIpOnLaunch"] for s in subnets.values())
    assert {render(e["Properties"]["ServiceName"]).rsplit(".", 1)[-1]
            for e in of_type(synth.resources, "AWS::EC2::VPCEndpoint").values()} == {"s3", "dynamodb"}
    _, group = _only(synth, "AWS::EC2::SecurityGroup")
    assert "SecurityGroupIngress" not in group
    synth.template.resource_count_is("AWS::EC2::SecurityGroupIngress", 0)
    assert [(e["CidrIp"], e["IpProtocol"]) for e in group["SecurityGroupEgress"]] == [("0.0.0.0/0", "-1")]


def test_task_definition_is_the_worker_on_fargate(synth) -> None:
    fargate = SETTINGS.fargate
    synth.template.has_resource_properties("AWS::ECS::Cluster", {"ClusterName": NAMES.ecs_cluster})
    _, task = _only(synth, "AWS::ECS::TaskDefinition")
    assert task["Family"] == NAMES.ecs_task_family
    assert task["RequiresCompatibilities"] == ["FARGATE"] and task["NetworkMode"] == "awsvpc"
    assert (task["Cpu"], task["Memory"]) == (str(fargate.cpu), str(fargate.memory_mib))
    (container,) = task["ContainerDefinitions"]
    assert container["Name"] == NAMES.ecs_container
    # Container-level cpu/memory: moto's RunTask fails without them (shared/notes/aws-offline.md 2e).
    assert (container["Cpu"], container["Memory"]) == (fargate.cpu, fargate.memory_mib)
    assert "cdk-hnb659fds-container-assets" in container["Image"]["Fn::Sub"]
    env = {e["Name"]: render(e["Value"]) for e in container["Environment"]}
    # The same settings as the worker Lambda, plus the region Lambda would have set.
    expected = {k: v for k, v in _env(synth, "worker").items() if k != "POWERTOOLS_SERVICE_NAME"}
    assert env == {**expected, "AWS_REGION": "us-east-1"}


def test_worker_image_is_a_staged_directory_asset_built_only_at_deploy(synth) -> None:
    """The image's context is the DAG-code bundle synth built (here, with no requirements, Updraft's one bundle):
    the image copies it as it is, so nothing is resolved at build and the image runs the functions' versions."""
    (image,) = synth.assets["dockerImages"].values()
    source = image["source"]
    assert source["dockerFile"] == DOCKERFILE and source["platform"] == "linux/amd64"
    assert "dockerBuildArgs" not in source  # nothing to resolve in the image
    staged = synth.outdir / source["directory"]
    files = {str(p.relative_to(staged)) for p in staged.rglob("*") if p.is_file()}
    assert {DOCKERFILE, "bundle/functions/worker/handler.py", "bundle/updraft/executors/fargate.py",
            "bundle/airflow/__init__.py", "bundle/packages.lock"} <= files
    # The context is the bundle and its Dockerfile, nothing else: no venv, node_modules, tests, cdk.out, .git.
    assert {f.split("/")[0] for f in files} == {"bundle", DOCKERFILE}
    assert not [f for f in files if "/tests/" in f]
    lock = (staged / "bundle" / "packages.lock").read_text()
    assert read_lock(lock) == read_lock(RUNTIME_LOCK.read_text())
    # The container runs what FargateExecutor asks for.
    cmd = [line for line in (staged / DOCKERFILE).read_text().splitlines() if line.startswith("CMD ")]
    assert cmd == [f"CMD {json.dumps(list(DEFAULT_COMMAND))}"]
    assert [line for line in (staged / DOCKERFILE).read_text().splitlines()
            if line.startswith(("RUN pip", "ARG"))] == []


# -- deferrals and API -------------------------------------------------------------------------------------

def test_deferral_state_machine_waits_then_resumes_the_worker(synth) -> None:
    """The deployed definition is ``updraft.triggers.state_machine``'s (the one local mode's engine runs)."""
    from updraft.triggers.state_machine import definition as updraft_definition

    _, machine = _only(synth, "AWS::StepFunctions::StateMachine")
    assert machine["StateMachineName"] == NAMES.deferral_state_machine
    assert machine["StateMachineType"] == "STANDARD"
    worker = f"<{function_id(synth.resources, 'worker')}.Arn>"
    check = f"<{function_id(synth.resources, 'trigger_check')}.Arn>"
    definition = json.loads(render(machine["DefinitionString"]))
    assert definition == updraft_definition(worker, check)
    choice = definition["States"][definition["StartAt"]]
    wait = definition["States"][next(c["Next"] for c in choice["Choices"] if c["StringEquals"] == "wait")]
    assert wait["Type"] == "Wait" and wait["TimestampPath"] == "$.resume_at"
    resume = definition["States"][wait["Next"]]
    assert resume["Resource"] == "arn:aws:states:::lambda:invoke" and resume["End"]
    assert resume["Parameters"] == {"FunctionName": worker, "Payload.$": "$.resume", "InvocationType": "Event"}
    assert machine["LoggingConfiguration"]["Level"] == "ERROR"
    poll = definition["States"][next(c["Next"] for c in choice["Choices"] if c["StringEquals"] == "poll")]
    assert poll["Parameters"] == {"FunctionName": check, "Payload.$": "$", "InvocationType": "RequestResponse"}


def test_api_is_iam_authorized_and_proxies_to_the_api_function(synth) -> None:
    synth.template.has_resource_properties("AWS::ApiGateway::RestApi", {"Name": f"{NAMES.prefix}-api"})
    (iam_api,) = [k for k, v in of_type(synth.resources, "AWS::ApiGateway::RestApi").items()
                  if v["Properties"]["Name"] == f"{NAMES.prefix}-api"]  # the users API: test_auth_stack.py
    methods = [m for m in of_type(synth.resources, "AWS::ApiGateway::Method").values()
               if m["Properties"]["RestApiId"] == {"Ref": iam_api}]
    api = function_id(synth.resources, "api")
    assert len(methods) == 2  # / and /{proxy+}
    for method in methods:
        props = method["Properties"]
        assert props["AuthorizationType"] == "AWS_IAM"
        assert props["Integration"]["Type"] == "AWS_PROXY"
        assert f"<{api}.Arn>" in render(props["Integration"]["Uri"])
    synth.template.resource_count_is("AWS::ApiGateway::Account", 0)  # account-wide: not this stack's to own
    synth.template.has_resource_properties("AWS::ApiGateway::Stage", {"StageName": "dev"})


def test_resource_inventory(synth) -> None:
    """What one environment is (infra/README.md lists it): a change here is a change to document."""
    counts: dict[str, int] = {}
    for resource in synth.resources.values():
        counts[resource["Type"]] = counts.get(resource["Type"], 0) + 1
    assert {t: counts.get(t, 0) for t in (
        "AWS::Lambda::Function", "AWS::IAM::Role", "AWS::Logs::LogGroup", "AWS::CloudWatch::Alarm",
        "AWS::ECS::Cluster", "AWS::ECS::TaskDefinition", "AWS::StepFunctions::StateMachine",
        "AWS::ApiGateway::RestApi", "AWS::EC2::NatGateway")} == {
        "AWS::Lambda::Function": 8,  # ours (6) + CDK's bucket-notifications handler and bucket emptier (dev)
        # 6 functions, task, task execution, state machine, notifications handler, bucket emptier, DAG code
        "AWS::IAM::Role": 12,
        "AWS::Logs::LogGroup": 9,  # 6 functions, Fargate task, state machine, task logs
        "AWS::CloudWatch::Alarm": 5, "AWS::ECS::Cluster": 1,  # DLQ, import errors, scheduler, parser, poison
        "AWS::ECS::TaskDefinition": 1, "AWS::StepFunctions::StateMachine": 1, "AWS::ApiGateway::RestApi": 2,  # IAM, users
        "AWS::EC2::NatGateway": 0}


def test_every_environment_has_valid_settings() -> None:
    for settings in ENVIRONMENTS.values():
        assert settings.log_retention_days in RETENTION
        assert 60 <= settings.worker_max_event_age_seconds <= 21600
        assert settings.worker.timeout_seconds <= 900
        ResourceNames(settings.name)  # a valid name in bucket and function names
    with pytest.raises(ValueError, match="unknown environment"):
        settings_for("qa")


def test_no_environment_reserves_worker_concurrency_by_default(synth) -> None:
    """A reservation fails at CREATE on an account whose concurrency quota is under it + 100 (AWS keeps 100
    unreserved; new accounts often start lower): every environment runs in the unreserved pool unless it opts in."""
    assert all(settings.worker.reserved_concurrency is None for settings in ENVIRONMENTS.values())
    assert all("ReservedConcurrentExecutions" not in fn["Properties"]
               for fn in of_type(synth.resources, "AWS::Lambda::Function").values())


def test_reserved_worker_concurrency_below_parallelism_is_refused() -> None:
    """Lambda queues async invokes past reserved concurrency without priority: claims must never outnumber it."""
    staging = settings_for("staging")
    with pytest.raises(ValueError, match=r"reserved concurrency \(10\) is below parallelism \(32\)"):
        dataclasses.replace(staging, worker=dataclasses.replace(staging.worker, reserved_concurrency=10))
    # At parallelism or above (opted in), or unreserved (the account's pool, the default), it is accepted.
    dataclasses.replace(staging, worker=dataclasses.replace(staging.worker, reserved_concurrency=32))
    dataclasses.replace(staging, worker=dataclasses.replace(staging.worker, reserved_concurrency=None))


def test_synth_looks_nothing_up(synth) -> None:
    """No context provider is missing (the CLI would call AWS for it): the AZs are CloudFormation's to pick."""
    manifest = json.loads((synth.outdir / "manifest.json").read_text())
    assert "missing" not in manifest
    zones = [s["Properties"]["AvailabilityZone"] for s in of_type(synth.resources, "AWS::EC2::Subnet").values()]
    assert zones == [{"Fn::Select": [i, {"Fn::GetAZs": ""}]} for i in range(2)]


def test_lambda_bundle_is_compiled_for_the_runtime(synth) -> None:
    from infra.constructs.bundling import RUNTIME_PYTHON

    code = _function(synth, "worker")["Code"]
    assert all(_function(synth, name)["Code"] == code for name in FUNCTIONS)  # no requirements: one asset for all
    (asset,) = [a for a in synth.assets["files"].values()
                if any(d["objectKey"] == code["S3Key"] for d in a["destinations"].values())]
    staged = synth.outdir / asset["source"]["path"]
    pyc = f"handler.cpython-{RUNTIME_PYTHON.replace('.', '')}.pyc"
    handler = staged / "functions" / "worker" / "__pycache__" / pyc
    assert int.from_bytes(handler.read_bytes()[4:8], "little") == 0b01  # hash-based, never checked (PEP 552)
    assert {p.name for p in staged.iterdir()} >= {"functions", "updraft", "airflow", "packages.lock"}
    assert not list(staged.rglob("tests"))
    assert not (staged / "dag_packages").exists() and not (staged / "Dockerfile").exists()


def test_lambda_asset_hash_follows_the_sources_and_the_lock_not_the_bundle(tmp_path, monkeypatch) -> None:
    """pip's output differs between runs; the hash must not, or every deploy re-uploads and updates everything.
    It changes with a source and with the lock of Updraft's packages."""
    from infra.constructs import bundling
    from infra.packages import Packages

    packages = Packages(read_lock(RUNTIME_LOCK.read_text()), None)

    def key(packages: Packages = packages, dependencies: bool = False) -> str:
        return bundling.bundle_key(packages, dag_code=False, dependencies=dependencies, architecture="x86_64")

    assert key(dependencies=True) == key(dependencies=True) != key()
    (tmp_path / "functions" / "x").mkdir(parents=True)
    (tmp_path / "functions" / "x" / "handler.py").write_text("A = 1\n")
    (tmp_path / "functions" / "x" / "__pycache__").mkdir()
    monkeypatch.setattr(bundling, "SOURCES", {tmp_path / "functions": "functions"})
    before = key()
    (tmp_path / "functions" / "x" / "__pycache__" / "handler.cpython-311.pyc").write_bytes(b"ignored")
    assert key() == before
    (tmp_path / "functions" / "x" / "handler.py").write_text("A = 2\n")
    assert key() != before
    assert key(Packages({**packages.runtime, "botocore": "1.0.0"}, None)) != key()


def test_the_infra_readme_states_the_dev_templates_size(synth):
    """infra/README.md's figures are the template's own: a change that adds or removes resources updates them."""
    readme = (Path(__file__).resolve().parents[2] / "infra" / "README.md").read_text()
    stated = re.search(r"The dev template has \*\*(\d+) resources\*\* \(about (\d+) KB", readme)
    heading = re.search(r"## Resources \(dev: (\d+)\)", readme)
    assert stated and heading, "infra/README.md no longer states the dev template's size"
    size_kb = len(json.dumps(synth.template.to_json(), separators=(",", ":"))) / 1024
    assert int(stated[1]) == int(heading[1]) == len(synth.resources)
    assert abs(int(stated[2]) - size_kb) <= 5, f"the dev template is {size_kb:.0f} KB"


# -- dashboard ---------------------------------------------------------------------------------------------

def _dashboard_body(synth) -> dict:
    _, props = _only(synth, "AWS::CloudWatch::Dashboard")
    assert props["DashboardName"] == f"{NAMES.prefix}-dashboard"
    body = props["DashboardBody"]
    if isinstance(body, dict):  # Fn::Join around the tokens (function names, the table, alarm ARNs)
        [_, parts] = body["Fn::Join"]
        body = "".join(part if isinstance(part, str) else "TOKEN" for part in parts)
    return json.loads(body)


def test_the_dashboard_graphs_airflow_s_metrics_aws_s_and_every_alarm(synth) -> None:
    widgets = _dashboard_body(synth)["widgets"]
    titles = [w["properties"].get("title", "") for w in widgets]
    for title in ("Alarms", "Runs by state", "Task durations", "Schedule delay", "Hop latency", "Pool slots",
                  "Parse times", "Import errors", "Throttles", "Lambda errors", "Lambda concurrency",
                  "Deferral waits"):
        assert any(t.startswith(title) for t in titles), title
    text = json.dumps(widgets)
    namespace = UpdraftConfig.from_env(_env(synth, "scheduler")).metrics_namespace
    for name in ("dagrun.duration.success", "dagrun.duration.failed", "dagrun.schedule_delay", "task.duration",
                 "task.queued_duration", "pool.open_slots", "pool.running_slots", "dag_processing.last_duration",
                 "dag_processing.import_errors"):
        assert name in text, name
    expressions = [m[-1]["expression"] for w in widgets for m in w["properties"].get("metrics", [])
                   if isinstance(m[-1], dict) and "expression" in m[-1]]
    # Runs ended: the sum over every DAG's series of Airflow's dagrun.duration.success (tagged dag_id).
    assert (f'SUM(SEARCH(\'{{"{namespace}",dag_id}} MetricName="dagrun.duration.success"\', \'SampleCount\', 300))'
            in expressions)
    for aws in ("ReadThrottleEvents", "Throttles", "ConcurrentExecutions", "ExecutionsStarted", "ExecutionsFailed"):
        assert aws in text, aws
    [alarms] = [w for w in widgets if w["properties"].get("title") == "Alarms"]
    assert len(alarms["properties"]["alarms"]) == len(of_type(synth.resources, "AWS::CloudWatch::Alarm")) == 5


def test_every_function_traces_to_x_ray(synth) -> None:
    for name in FUNCTIONS:
        assert _function(synth, name)["TracingConfig"] == {"Mode": "Active"}, name
    statements = [s for p in of_type(synth.resources, "AWS::IAM::Policy").values()
                  for s in p["Properties"]["PolicyDocument"]["Statement"]]
    assert any("xray:PutTraceSegments" in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
               for s in statements)
