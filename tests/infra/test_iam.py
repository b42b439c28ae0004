"""Least privilege in the synthesized dev stack: every role's actions, and every statement's resources, in both
networking modes (the default, and an existing VPC: tests/infra/conftest.py's two session synths).
"""

from __future__ import annotations

import json
import re

import pytest

from infra.constructs.access import TABLE_READ_WRITE, VPC_INTERFACES
from tests.infra.cfn import as_list, function_id, function_role, of_type, render, role_statements

# Actions AWS authorizes only on "*" (no resource-level permissions), each with the role that needs it and why.
WILDCARD_ALLOWED = {
    # Task execution role: the ECR login token is account-wide; the image pull itself is scoped to the repository.
    "ecr:GetAuthorizationToken",
    # State machine role: CloudWatch Logs' vended log delivery for Step Functions supports only "*".
    "logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery", "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries", "logs:PutResourcePolicy", "logs:DescribeResourcePolicies", "logs:DescribeLogGroups",
    # Every function's role: X-Ray's segment and telemetry uploads (active tracing) have no resource-level permissions.
    "xray:PutTraceSegments", "xray:PutTelemetryRecords",
    # The functions in an existing VPC: Lambda manages their network interfaces with these (AWS's
    # AWSLambdaVPCAccessExecutionRole grants them on "*"; the Describe actions have no resource-level permissions).
    *VPC_INTERFACES,
}
# Roles CDK creates for its own custom resources, with their managed policy (AWSLambdaBasicExecutionRole): the
# bucket notifications' handler, and the provider that empties a bucket deleted with the stack (dev; its S3
# rights are in the bucket's policy, on that bucket only: test_stack.py).
CDK_OWNED_ROLE = re.compile(r"^(BucketNotificationsHandler[0-9a-f]{32}Role|"
                            r"CustomS3AutoDeleteObjectsCustomResourceProviderRole)")
# Physical names outside the template that a statement may name: this environment's (literal names, used to
# avoid dependency cycles) and the CDK bootstrap's container asset repository.
NAMED = re.compile(r"[:/](updraft-dev-|cdk-hnb659fds-container-assets-123456789012-us-east-1$)")

LOGS = {"logs:CreateLogStream", "logs:PutLogEvents"}  # a role's own log group; the workers' also the task logs
# The workers read a try's own stream back where the try goes on from an earlier part (a resumed deferral, a
# sensor's next poke, a hand-off): the deploy tier's IAM check found the read denied.
TASK_LOGS = LOGS | {"logs:GetLogEvents"}
TABLE = set(TABLE_READ_WRITE)
STORE = {"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}
DAGS = {"s3:GetObject", "s3:ListBucket"}
DISPATCH = {"lambda:InvokeFunction", "ecs:RunTask", "ecs:TagResource", "iam:PassRole"}
SECRETS_KEY = {"kms:Encrypt", "kms:Decrypt"}  # variables and connections in the table (test_secrets_iam.py)
# A deferring try starts its wait; whoever ends a deferred try (worker's mini scheduler, scheduler, API) stops it.
DEFER = {"states:StartExecution", "states:StopExecution"}
TRACES = {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}  # active tracing (a run and its tries as one trace)
STOP_WAITS = {"states:StopExecution"}
# The scheduler's deferral sweep lists and describes executions, and starts one whose start was lost (issue 16).
SWEEP_WAITS = {"states:ListExecutions", "states:DescribeExecution", "states:StartExecution"}
EXPECTED_FUNCTION_ACTIONS = {
    # (the parser's and scheduler's failed async events go to the DLQ too: their on-failure destination)
    "parser": TRACES | LOGS | TABLE | STORE | DAGS | {"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"},
    "scheduler": TRACES | LOGS | TABLE | STORE | DISPATCH | STOP_WAITS | SWEEP_WAITS | {
        "sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"},
    "worker": TRACES | TASK_LOGS | TABLE | STORE | DAGS | DISPATCH | SECRETS_KEY | DEFER | {
        "sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"},  # its on-failure destination
    # (the worker's logs grants cover its own group and the task log group: test_only_the_workers_write_task_logs)
    # Its routes read and write the table (trigger, pause, pools), read store/ objects and task logs, nudge the
    # scheduler.
    "api": TRACES | LOGS | TABLE | SECRETS_KEY | STOP_WAITS | {"s3:GetObject", "s3:GetObjectVersion", "logs:GetLogEvents",
                                                      "lambda:InvokeFunction"},
}


# In an existing VPC, the functions that run DAG code (the trigger check too: test_network.py) also manage their
# network interfaces; nothing else changes.
IN_VPC = {"parser", "worker"}


@pytest.fixture(params=["default", "vpc"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def synth(mode: str, synth, vpc_synth):  # the session's synth of the mode (conftest.py)
    return vpc_synth if mode == "vpc" else synth


def _task_definition(resources: dict) -> dict:
    (task,) = of_type(resources, "AWS::ECS::TaskDefinition").values()
    return task["Properties"]


def _actions(statements: list[dict]) -> set[str]:
    return {a for s in statements for a in as_list(s["Action"])}


def _all_roles(resources: dict) -> dict[str, list[dict]]:
    return {role: role_statements(resources, role) for role in of_type(resources, "AWS::IAM::Role")}


def _specific(resource: str, logical_ids: set[str]) -> bool:
    """Names one resource of this stack (or a path under it): wildcards only as a trailing suffix."""
    head = resource.rstrip("*")
    if not head or "*" in head:
        return False
    ref = re.match(r"^<([A-Za-z0-9]+)[.>]", head)
    if ref:
        return ref.group(1) in logical_ids
    arn = head.split(":", 5)
    return len(arn) == 6 and arn[3:5] == ["us-east-1", "123456789012"] and bool(NAMED.search(arn[5]))


def test_every_statement_names_specific_resources(synth) -> None:
    logical_ids = set(synth.resources)
    checked = 0
    for role, statements in _all_roles(synth.resources).items():
        for statement in statements:
            assert statement["Effect"] == "Allow", (role, statement)
            actions = as_list(statement["Action"])
            assert not any(a == "*" or a.endswith(":*") for a in actions), (role, statement)
            for resource in as_list(render(statement["Resource"])):
                if resource == "*":
                    assert set(actions) <= WILDCARD_ALLOWED, (role, statement)
                else:
                    assert _specific(resource, logical_ids), (role, resource)
                checked += 1
    assert checked > 40


def test_roles_have_no_managed_policies(synth) -> None:
    """AWSLambdaBasicExecutionRole would grant logs:* on every log group: each role writes its own group only."""
    for role_id, role in of_type(synth.resources, "AWS::IAM::Role").items():
        if not CDK_OWNED_ROLE.match(role_id):
            assert "ManagedPolicyArns" not in role["Properties"], role_id


@pytest.mark.parametrize("name", sorted(EXPECTED_FUNCTION_ACTIONS))
def test_each_function_role_has_exactly_its_actions(synth, mode: str, name: str) -> None:
    role = function_role(synth.resources, name)
    vpc = set(VPC_INTERFACES) if mode == "vpc" and name in IN_VPC else set()
    assert _actions(role_statements(synth.resources, role)) == EXPECTED_FUNCTION_ACTIONS[name] | vpc
    principal = synth.resources[role]["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
    assert principal == {"Service": "lambda.amazonaws.com"}


def test_fargate_roles(synth) -> None:
    task = _task_definition(synth.resources)
    task_role, execution_role = task["TaskRoleArn"]["Fn::GetAtt"][0], task["ExecutionRoleArn"]["Fn::GetAtt"][0]
    # The task is a worker: the worker Lambda's data access (task logs included) and dispatching, minus its
    # Lambda-only grants. Its container's own output goes through the execution role's awslogs driver.
    assert _actions(role_statements(synth.resources, task_role)) == (TABLE | STORE | DAGS | DISPATCH | TASK_LOGS
                                                                     | SECRETS_KEY | DEFER)
    assert _actions(role_statements(synth.resources, execution_role)) == LOGS | {
        "ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage",
        "ecr:GetAuthorizationToken"}


def test_only_the_parser_workers_and_the_api_read_dag_code(synth) -> None:
    """The parser and the workers run it; the API only shows its text (``GET /dagSources``) and cannot list it."""
    task_role = _task_definition(synth.resources)["TaskRoleArn"]["Fn::GetAtt"][0]
    readers = set()
    for role, statements in _all_roles(synth.resources).items():
        for statement in statements:
            resources = as_list(render(statement["Resource"]))
            if "s3:GetObject" in as_list(statement["Action"]) and any(r.endswith("/dags/*") for r in resources):
                readers.add(role)
            if "s3:ListBucket" in as_list(statement["Action"]):
                assert statement["Condition"] == {"StringLike": {"s3:prefix": ["dags/*"]}}
                readers.add(role)
    assert readers == {function_role(synth.resources, "parser"), function_role(synth.resources, "worker"),
                       task_role, function_role(synth.resources, "api")}


def _task_log_group(resources: dict) -> str:
    (found,) = [k for k, v in of_type(resources, "AWS::Logs::LogGroup").items()
                if v["Properties"].get("LogGroupName") == "updraft-dev-task-logs"]
    return found


def test_only_the_workers_write_task_logs_and_only_their_streams(synth) -> None:
    task_logs = _task_log_group(synth.resources)
    task_role = _task_definition(synth.resources)["TaskRoleArn"]["Fn::GetAtt"][0]
    writers = {}
    for role, statements in _all_roles(synth.resources).items():
        for statement in statements:
            resources = as_list(render(statement["Resource"]))
            if any(task_logs in str(r) for r in resources):
                assert role not in writers, role  # one statement per role
                writers[role] = statement
            # The bucket's logs/ prefix is local mode's: on AWS nobody reads or writes task logs there.
            assert not any(str(r).endswith("/logs/*") for r in resources), (role, statement)
    # The API reads tries' logs back (its logs route), and only reads.
    reader = writers.pop(function_role(synth.resources, "api"))
    assert as_list(reader["Action"]) == ["logs:GetLogEvents"] and render(reader["Resource"]) == f"<{task_logs}.Arn>"
    assert set(writers) == {function_role(synth.resources, "worker"), task_role}
    for statement in writers.values():
        # create a try's stream, put its events, read its own earlier part back
        assert set(as_list(statement["Action"])) == TASK_LOGS
        assert render(statement["Resource"]) == f"<{task_logs}.Arn>"  # arn:...:log-group:<name>:* (its streams)


def test_dispatching_is_scoped_to_the_worker_and_its_task(synth) -> None:
    task = _task_definition(synth.resources)
    (cluster,) = of_type(synth.resources, "AWS::ECS::Cluster")
    dispatchers = [function_role(synth.resources, "scheduler"), function_role(synth.resources, "worker"),
                   task["TaskRoleArn"]["Fn::GetAtt"][0]]
    invokes = {}
    for role in dispatchers:
        by_action = {a: s for s in role_statements(synth.resources, role) for a in as_list(s["Action"])}
        invokes[role] = sorted(render(s["Resource"]) for s in role_statements(synth.resources, role)
                               if "lambda:InvokeFunction" in as_list(s["Action"]))
        run = by_action["ecs:RunTask"]
        assert render(run["Resource"]) == "arn:aws:ecs:us-east-1:123456789012:task-definition/updraft-dev-worker:*"
        assert run["Condition"] == {"ArnEquals": {"ecs:cluster": {"Fn::GetAtt": [cluster, "Arn"]}}}
        tag = by_action["ecs:TagResource"]
        assert tag["Condition"] == {"StringEquals": {"ecs:CreateAction": "RunTask"}}
        passed = by_action["iam:PassRole"]
        assert sorted(json.dumps(r) for r in passed["Resource"]) == sorted(
            json.dumps(task[k]) for k in ("TaskRoleArn", "ExecutionRoleArn"))
        assert passed["Condition"] == {"StringEquals": {"iam:PassedToService": "ecs-tasks.amazonaws.com"}}
    # Every dispatcher invokes the worker and the scheduler: the workers (Lambda and Fargate) hand fan-ins to it,
    # and every dispatcher asks scheduler invocations for shares of a wide claim (scheduling.claim_shares); the
    # scheduler asks the parser to evaluate a custom timetable's next runs (it never imports user code itself).
    worker_arn = "arn:aws:lambda:us-east-1:123456789012:function:updraft-dev-worker"
    scheduler_arn = "arn:aws:lambda:us-east-1:123456789012:function:updraft-dev-scheduler"
    parser_arn = "arn:aws:lambda:us-east-1:123456789012:function:updraft-dev-parser"
    scheduler_role, *worker_roles = dispatchers
    assert invokes[scheduler_role] == [parser_arn, scheduler_arn, worker_arn]
    assert all(invokes[role] == [scheduler_arn, worker_arn] for role in worker_roles)


def test_only_workers_start_deferrals_on_the_one_machine_and_the_machine_only_resumes_the_worker(synth) -> None:
    roles = _all_roles(synth.resources)
    task_role = _task_definition(synth.resources)["TaskRoleArn"]["Fn::GetAtt"][0]
    machine_arn = "arn:aws:states:us-east-1:123456789012:stateMachine:updraft-dev-deferrals"
    executions = "arn:aws:states:us-east-1:123456789012:execution:updraft-dev-deferrals:*"
    starters, stoppers = set(), set()
    for role, statements in roles.items():
        for statement in statements:
            actions = set(as_list(statement["Action"]))
            if "states:StartExecution" in actions:
                assert (actions, render(statement["Resource"])) == ({"states:StartExecution"}, machine_arn)
                starters.add(role)
            if "states:StopExecution" in actions:
                assert (actions, render(statement["Resource"])) == ({"states:StopExecution"}, executions)
                stoppers.add(role)
            assert not actions & {"states:StartExecution", "states:StopExecution"} or actions <= DEFER
    worker = function_role(synth.resources, "worker")
    assert starters == {worker, task_role, function_role(synth.resources, "scheduler")}  # (its sweep)
    assert stoppers == {worker, task_role, function_role(synth.resources, "scheduler"),
                        function_role(synth.resources, "api")}
    (machine,) = of_type(synth.resources, "AWS::StepFunctions::StateMachine").values()
    statements = roles[machine["Properties"]["RoleArn"]["Fn::GetAtt"][0]]
    invoked = sorted(arn for s in statements if s["Action"] == "lambda:InvokeFunction" for arn in render(s["Resource"]))
    worker, check = function_id(synth.resources, "worker"), function_id(synth.resources, "trigger_check")
    assert invoked == sorted([f"<{worker}.Arn>", f"<{worker}.Arn>:*", f"<{check}.Arn>", f"<{check}.Arn>:*"])
    assert _actions(statements) - {"lambda:InvokeFunction"} <= WILDCARD_ALLOWED


def test_only_the_functions_in_a_vpc_manage_network_interfaces(synth, mode: str) -> None:
    """AWSLambdaVPCAccessExecutionRole's EC2 statement, as one statement of its own, on the three functions that
    run DAG code (parser, worker, trigger check) in an existing VPC; no role has it by default."""
    holders = {role: [s for s in statements if any(a.startswith("ec2:") for a in as_list(s["Action"]))]
               for role, statements in _all_roles(synth.resources).items()}
    holders = {role: found for role, found in holders.items() if found}
    expected = {function_role(synth.resources, name) for name in ("parser", "worker", "trigger_check")}
    assert set(holders) == (expected if mode == "vpc" else set())
    for (statement,) in holders.values():
        assert (set(as_list(statement["Action"])), statement["Resource"]) == (set(VPC_INTERFACES), "*")
