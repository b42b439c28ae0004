"""``cdk deploy -c env=dev`` on the embedded AWS (once: every test of the module drives that deployment), then DAG
runs driven only through what it created, each function running its deployed zip as Lambda runs it
(``lambda_runtime``): the DAG file uploaded to the deployed bucket reaches the parser through the bucket's
notification (CDK's notifications custom resource, run from its own zip, configured it); the run is triggered
with the API function's proxy event (``events/api/trigger_dag_run.json``, IAM shape) through Lambda's invoke API;
the API's nudge, the tick rule's target and the workers' invokes are Lambda's asynchronous invokes, driven in
order; the run ends with Airflow's states, read back through the API function, and its task log in the task log
group. Last, every resource of the template is checked created or stood in for (``stand_ins``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.deploy.conftest import Environment

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"

DAG_FILE = '''
import pendulum

from airflow.sdk import dag, task


@dag(schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False,
     is_paused_upon_creation=False)
def etl():
    @task
    def extract(**context) -> int:
        return int(context["dag_run"].conf.get("n", 1))

    @task
    def transform(n: int) -> int:
        return n * 10

    @task
    def load(total: int) -> None:
        print(f"loaded {total} rows")

    load(transform(extract()))


etl()
'''


def _api(environment: Environment, event: dict[str, Any]) -> tuple[int, Any]:
    """The API function invoked through Lambda's API with a proxy event (as API Gateway invokes it)."""
    lam = environment.session.client("lambda")
    answer = lam.invoke(FunctionName=environment.function("api"), Payload=json.dumps(event).encode())
    assert "FunctionError" not in answer, answer["Payload"].read()
    response = json.loads(answer["Payload"].read())
    assert isinstance(response, dict) and "statusCode" in response, (response, environment.runtime.invocations[-1])
    return response["statusCode"], json.loads(response["body"]) if response.get("body") else None


def _get(environment: Environment, path: str) -> tuple[int, Any]:
    event = json.loads((EVENTS / "api" / "trigger_dag_run.json").read_text())
    event.update(path=path, httpMethod="GET", body=None, pathParameters={"proxy": path.lstrip("/")})
    event["requestContext"].update(httpMethod="GET", path=f"/dev{path}")
    return _api(environment, event)


def test_a_dag_file_uploaded_and_triggered_through_the_api_runs_to_success(environment: Environment) -> None:
    runtime, session = environment.runtime, environment.session
    bucket = environment.deployed.outputs["BucketName"]
    session.client("s3").put_object(Bucket=bucket, Key=f"{environment.deployed.outputs['DagsPrefix']}etl.py",
                                    Body=DAG_FILE.encode())
    (parse,) = runtime.drain()
    assert parse.function == environment.function("parser") and parse.error is None, parse.output[-3000:]
    assert parse.result["parsed"]["dags/etl.py"]["import_errors"] == [], parse.result

    status, run = _api(environment, json.loads((EVENTS / "api" / "trigger_dag_run.json").read_text()))
    assert status == 200, run
    assert (run["dag_run_id"], run["conf"]) == ("manual__from_the_sample_event", {"n": 2})

    tick_rule = environment.assembly.resources[next(
        k for k, v in environment.assembly.resources.items()
        if v["Type"] == "AWS::Events::Rule" and "ScheduleExpression" in v["Properties"])]["Properties"]["Name"]
    (target,) = session.client("events").list_targets_by_rule(Rule=tick_rule)["Targets"]
    tick = json.loads((EVENTS / "scheduler" / "eventbridge_tick.json").read_text())
    for _ in range(6):  # the API's nudge and the workers' invokes; then ticks, as the rule delivers them
        ran = runtime.drain()
        failed = [r for r in ran if r.error is not None]
        assert not failed, f"{failed[0].function}: {failed[0].error}\n{failed[0].output[-3000:]}"
        status, state = _get(environment, "/api/v2/dags/etl/dagRuns/manual__from_the_sample_event")
        if state["state"] in ("success", "failed"):
            break
        session.client("lambda").invoke(FunctionName=target["Arn"], InvocationType="Event",
                                         Payload=json.dumps(tick).encode())
    assert state["state"] == "success", state
    status, tis = _get(environment, "/api/v2/dags/etl/dagRuns/manual__from_the_sample_event/taskInstances")
    assert {t["task_id"]: t["state"] for t in tis["task_instances"]} == {
        "extract": "success", "transform": "success", "load": "success"}
    workers = {r.function for r in runtime.invocations} & {environment.function("worker")}
    assert workers, "no try ran in the deployed worker function"

    logs = session.client("logs")
    group = environment.deployed.physical[next(
        k for k, v in environment.assembly.resources.items()
        if v["Type"] == "AWS::Logs::LogGroup" and str(v["Properties"].get("LogGroupName", "")).endswith("task-logs"))]
    streams = {s["logStreamName"] for s in logs.describe_log_streams(logGroupName=group)["logStreams"]}
    load_stream = next(s for s in streams if s.startswith("etl/") and "/load/" in s)
    text = "".join(e["message"] for e in logs.get_log_events(logGroupName=group, logStreamName=load_stream)["events"])
    assert "loaded 20 rows" in text


# The sample events that name what the stack creates, and the function each is for; the worker's and the trigger
# check's name a particular try (tests/functional sends them to stores that hold it).
SAMPLES = {"parser": ("s3_object_created.json", "s3_object_removed.json", "s3_mixed_records.json"),
           "scheduler": ("eventbridge_tick.json",),
           "asset_events": ("s3_object_created.json", "eventbridge_object_created.json"),
           "api": ("health.json",)}
FOREIGN_BUCKET = "someone-elses-bucket"  # s3_mixed_records.json: the record the parser must reject


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_the_sample_events_name_the_deployed_resources_and_their_handlers_take_them(
        environment: Environment) -> None:
    outputs = environment.deployed.outputs
    bucket = outputs["BucketName"]
    (tick_rule,) = [r for r in environment.session.client("events").list_rules()["Rules"]
                    if "ScheduleExpression" in r]
    s3 = environment.session.client("s3")
    s3.put_object(Bucket=bucket, Key="dags/example etl(v2).py", Body=DAG_FILE.replace("def etl", "def etl_v2")
                  .replace("etl()", "etl_v2()").encode())
    s3.put_object(Bucket=bucket, Key="dags/second.py", Body=b"")
    lam = environment.session.client("lambda")
    for function, names in SAMPLES.items():
        for name in names:
            event = json.loads((EVENTS / function / name).read_text())
            texts = _strings(event)
            buckets = {t for t in texts if t.startswith("updraft-") and t.endswith(("-us-east-1", "-data"))}
            assert buckets <= {bucket}, f"{function}/{name} names {buckets}, the stack's bucket is {bucket}"
            rules = {t for t in texts if ":rule/" in t}
            assert rules <= {tick_rule["Arn"]}, f"{function}/{name} names {rules}, the stack's is {tick_rule['Arn']}"
            answer = lam.invoke(FunctionName=environment.function(function), Payload=json.dumps(event).encode())
            payload = json.loads(answer["Payload"].read())
            assert "FunctionError" not in answer, (function, name, payload)
            if function == "parser":
                # Only the foreign bucket's record is rejected for its bucket (the mixed records' traversal key is
                # rejected for its path).
                rejected = payload.get("rejected", {})
                assert all(FOREIGN_BUCKET in key or "bucket" not in reason for key, reason in rejected.items()), \
                    (name, rejected)
                assert payload["parsed"] or payload["removed"], (name, payload)  # the stack's bucket's files
            if function == "api":
                assert payload["statusCode"] == 200, payload


FARGATE_DAG = """
import datetime as dt
import time

import pendulum

from airflow.sdk import dag, task


@dag(schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False, is_paused_upon_creation=False,
     default_args={"retries": 1, "retry_delay": dt.timedelta(seconds=2)})
def heavy():
    @task(executor="fargate")
    def train(**context):
        if context["ti"].try_number == 1:
            print("training", flush=True)
            time.sleep(600)  # its task is killed meanwhile, as ECS stops one that ran out of memory
        print("trained on fargate")

    train()


heavy()
"""


def _trigger(environment: Environment, dag_id: str, run_id: str) -> None:
    event = json.loads((EVENTS / "api" / "trigger_dag_run.json").read_text())
    path = f"/api/v2/dags/{dag_id}/dagRuns"
    event.update(path=path, pathParameters={"proxy": path.lstrip("/")},
                 body=json.dumps({"dag_run_id": run_id, "logical_date": None}))
    event["requestContext"]["path"] = f"/dev{path}"
    status, run = _api(environment, event)
    assert status == 200, run


def _drain(environment: Environment) -> None:
    failed = [r for r in environment.runtime.drain() if r.error is not None]
    assert not failed, f"{failed[0].function}: {failed[0].error}\n{failed[0].output[-3000:]}"


def _started_task(environment: Environment, known: set[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The one task RunTask started since ``known`` (added to it) and its task definition, as ECS describes them."""
    ecs = environment.session.client("ecs")
    cluster = environment.deployed.physical[next(k for k, v in environment.assembly.resources.items()
                                                 if v["Type"] == "AWS::ECS::Cluster")]
    (arn,) = set(ecs.list_tasks(cluster=cluster)["taskArns"]) - known
    known.add(arn)
    (task,) = ecs.describe_tasks(cluster=cluster, tasks=[arn])["tasks"]
    definition = ecs.describe_task_definition(taskDefinition=task["taskDefinitionArn"])["taskDefinition"]
    return json.loads(json.dumps(task, default=str)), definition


def _stopped_event(task: dict[str, Any], container: str, exit_code: int) -> dict[str, Any]:
    """ECS's event for ``task`` stopped with its container's ``exit_code`` (``events/scheduler/ecs_task_stopped.json``
    is one), the task's own description as its detail."""
    event = json.loads((EVENTS / "scheduler" / "ecs_task_stopped.json").read_text())
    event["detail"] = {**task, "lastStatus": "STOPPED", "desiredStatus": "STOPPED", "stopCode": "EssentialContainerExited",
                       "stoppedReason": "Essential container in task exited",
                       "containers": [{"name": container, "lastStatus": "STOPPED", "exitCode": exit_code,
                                       "reason": "OutOfMemoryError: Container killed due to memory usage"}]}
    event["resources"] = [task["taskArn"]]
    return event


def test_a_fargate_try_whose_task_is_killed_fails_at_once_and_its_retry_runs_on_fargate(
        environment: Environment) -> None:
    """The deployed scheduler starts a Fargate task (moto's ECS records RunTask); the task runs as its container
    would (``fargate_runtime``) and is killed mid-try; ECS's stopped-task event, matched against the deployed rule
    by EventBridge's matcher, goes to the rule's target (the deployed scheduler), which fails the try at once as
    Airflow fails a task killed externally; the retry runs on Fargate to success, its log in the task log group."""
    from moto.events.models import EventPattern

    from tests.deploy.fargate_runtime import KILLED, FargateRuntime
    from updraft.store.keys import run_pk, ti_sk

    runtime, session = environment.runtime, environment.session
    (context,) = environment.deployed.image_contexts.values()
    fargate = FargateRuntime(runtime, context)
    session.client("s3").put_object(Bucket=environment.deployed.outputs["BucketName"], Key="dags/heavy.py",
                                    Body=FARGATE_DAG.encode())
    _drain(environment)
    _trigger(environment, "heavy", "manual__fargate")
    _drain(environment)  # the API's nudge: the scheduler claims train and starts its task
    known: set[str] = set()
    task, definition = _started_task(environment, known)
    dispatch = json.loads(next(e["value"] for o in task["overrides"]["containerOverrides"]
                               for e in o["environment"] if e["name"] == "UPDRAFT_DISPATCH"))
    assert (dispatch["task_id"], dispatch["executor"], task["launchType"]) == ("train", "fargate", "FARGATE")

    table = environment.deployed.outputs["TableName"]
    key = {"pk": {"S": run_pk("heavy", "manual__fargate")}, "sk": {"S": ti_sk("train", -1)}}

    def ti() -> dict[str, Any]:
        item = session.client("dynamodb").get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
        return {k: next(iter(v.values())) for k, v in item.items()}

    killed = fargate.run(task, definition, kill_when=lambda: ti()["state"] == "running")
    assert killed.exit_code == KILLED and ti()["state"] == "running", killed.output[-3000:]

    (rule,) = [r for r in session.client("events").list_rules()["Rules"]
               if "ECS Task State Change" in r.get("EventPattern", "")]
    event = _stopped_event(task, definition["containerDefinitions"][0]["name"], KILLED)
    assert EventPattern.load(rule["EventPattern"]).matches_event(event)
    (target,) = session.client("events").list_targets_by_rule(Rule=rule["Name"])["Targets"]
    assert target["Arn"].endswith(f":function:{environment.function('scheduler')}")
    session.client("lambda").invoke(FunctionName=target["Arn"], InvocationType="Event",
                                    Payload=json.dumps(event).encode())
    _drain(environment)
    lost = ti()
    assert lost["state"] == "up_for_retry" and lost["note"].startswith("killed externally: Fargate task "), lost
    assert "exit code 137" in lost["note"] and lost["note"].endswith("while the try was running")

    time.sleep(2)  # the retry's delay
    tick = json.loads((EVENTS / "scheduler" / "eventbridge_tick.json").read_text())
    session.client("lambda").invoke(FunctionName=environment.function("scheduler"), InvocationType="Event",
                                    Payload=json.dumps(tick).encode())
    _drain(environment)  # the retry is claimed and its task started
    retry, _ = _started_task(environment, known)
    ran = fargate.run(retry, definition)
    assert ran.exit_code == 0, ran.output[-3000:]
    _drain(environment)
    _, state = _get(environment, "/api/v2/dags/heavy/dagRuns/manual__fargate")
    assert state["state"] == "success", state
    assert (ti()["state"], ti()["try_number"]) == ("success", "2")

    logs = session.client("logs")
    group = environment.deployed.physical[next(
        k for k, v in environment.assembly.resources.items()
        if v["Type"] == "AWS::Logs::LogGroup" and str(v["Properties"].get("LogGroupName", "")).endswith("task-logs"))]
    (stream,) = [s["logStreamName"] for s in logs.describe_log_streams(logGroupName=group)["logStreams"]
                 if s["logStreamName"].startswith("heavy/") and s["logStreamName"].endswith("/2")]
    text = "".join(e["message"] for e in logs.get_log_events(logGroupName=group, logStreamName=stream)["events"])
    assert "trained on fargate" in text


# The target is 10 s after the template is rendered, just before the sensor's execute, so the sensor always finds
# it ahead (a target 10 s after the try's start was already past at a load of 20); 10 s also outlasts the test's
# look at the deferred state after the defer, so the resume never comes before it.
DEFERRING_DAG = """
import pendulum

from airflow.providers.standard.sensors.date_time import DateTimeSensorAsync
from airflow.sdk import dag, task


@dag(schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False, is_paused_upon_creation=False)
def waits():
    wait = DateTimeSensorAsync(task_id="wait",
                               target_time="{{ (macros.datetime.now(ti.start_date.tzinfo)"
                                           " + macros.timedelta(seconds=10)).isoformat() }}")

    @task
    def after() -> None:
        print("the wait is over")

    wait >> after()


waits()
"""


def test_a_deferred_try_waits_in_the_deployed_state_machine_and_resumes_in_the_worker(
        environment: Environment) -> None:
    """A sensor defers in the deployed worker, which starts an execution of the deployed state machine; the
    embedded AWS runs it (its Wait in real time, then the async invoke of the worker the definition names), the
    worker resumes the try and its mini scheduler runs the next task: the run succeeds."""
    runtime, session = environment.runtime, environment.session
    sfn = session.client("stepfunctions")
    machine = environment.deployed.physical[next(k for k, v in environment.assembly.resources.items()
                                                 if v["Type"] == "AWS::StepFunctions::StateMachine")]
    before = {e["executionArn"] for e in sfn.list_executions(stateMachineArn=machine)["executions"]}
    session.client("s3").put_object(Bucket=environment.deployed.outputs["BucketName"], Key="dags/waits.py",
                                    Body=DEFERRING_DAG.encode())
    _drain(environment)
    _trigger(environment, "waits", "manual__waits")
    tick = json.loads((EVENTS / "scheduler" / "eventbridge_tick.json").read_text())
    for _ in range(4):  # the nudge, ticks: the worker runs the sensor, which defers and starts its wait
        _drain(environment)
        _, tis = _get(environment, "/api/v2/dags/waits/dagRuns/manual__waits/taskInstances")
        if {t["task_id"]: t["state"] for t in tis["task_instances"]}["wait"] == "deferred":
            break
        session.client("lambda").invoke(FunctionName=environment.function("scheduler"), InvocationType="Event",
                                        Payload=json.dumps(tick).encode())
    assert {t["task_id"]: t["state"] for t in tis["task_instances"]}["wait"] == "deferred", (
        tis, [(r.function, r.result) for r in runtime.invocations[-4:]])
    (execution,) = [e for e in sfn.list_executions(stateMachineArn=machine)["executions"]
                    if e["executionArn"] not in before]
    deadline = time.monotonic() + 60

    def resumes() -> list[Any]:  # the state machine's invoke runs in the runtime as it is made (RequestResponse)
        return [r for r in runtime.invocations if isinstance(r.event, dict) and r.event.get("kind") == "resume_deferred"]

    while not resumes() and time.monotonic() < deadline:  # the Wait, in real time, then the worker's invoke
        time.sleep(0.2)
    (resumed,) = resumes()
    assert resumed.function == environment.function("worker") and resumed.error is None, resumed.output[-3000:]
    assert resumed.result["status"] == "resumed", resumed.result
    for _ in range(4):  # the resumed try, its mini scheduler's invokes of the next task; then ticks
        _drain(environment)
        _, run = _get(environment, "/api/v2/dags/waits/dagRuns/manual__waits")
        if run["state"] != "running":
            break
        session.client("lambda").invoke(FunctionName=environment.function("scheduler"), InvocationType="Event",
                                        Payload=json.dumps(tick).encode())
    assert run["state"] == "success", run
    assert sfn.describe_execution(executionArn=execution["executionArn"])["status"] == "SUCCEEDED"


LAMBDA_INIT_LIMIT_MS = 10_000  # Lambda's init phase: a handler module that imports longer fails its cold start


def test_every_function_that_ran_imported_within_lambdas_init_limit(environment: Environment) -> None:
    """After the module's runs (each invoke is a cold start here): every Updraft function that ran imported its
    handler from the deployed zip within Lambda's init limit, and the figures are printed (``-s``)."""
    ran = [run for run in environment.runtime.invocations if run.import_ms is not None]
    names = {environment.function(name): name for name in ("parser", "scheduler", "worker", "api", "asset_events")}
    by_function: dict[str, list[Any]] = {}
    for run in ran:
        by_function.setdefault(names.get(run.function, run.function), []).append(run)
    assert {"parser", "scheduler", "worker", "api", "asset_events"} <= set(by_function)
    for name, runs in sorted(by_function.items()):
        imports = sorted(run.import_ms for run in runs)
        print(f"{name}: {len(runs)} cold starts, import {imports[len(imports) // 2]:.0f} ms (median), "
              f"first invoke {runs[0].invoke_ms} ms")
        assert imports[-1] < LAMBDA_INIT_LIMIT_MS, (name, imports)


class _Deployed:
    """What the IAM check needs to know of the embedded AWS beyond a call's own parameters (``iam_check.Resolver``)."""

    def __init__(self, environment: Environment) -> None:
        from moto.cloudformation.models import cloudformation_backends
        from moto.cloudformation.parsing import clean_json

        from tests.deploy.conftest import ACCOUNT, REGION

        self.region, self.account = REGION, ACCOUNT
        self.environment = environment
        stack = cloudformation_backends[ACCOUNT][REGION].get_stack(environment.deployed.stack_id)
        # Bucket policies are one of the types moto skips (stand_ins.py): read from the template, resolved as
        # CloudFormation would.
        self.bucket_policies: dict[str, list[dict[str, Any]]] = {}
        for resource in environment.assembly.resources.values():
            if resource["Type"] == "AWS::S3::BucketPolicy":
                props = clean_json(resource["Properties"], stack.resource_map)
                self.bucket_policies[props["Bucket"]] = props["PolicyDocument"]["Statement"]

    def task_definition(self, name: str) -> tuple[str, list[str]]:
        found = self.environment.session.client("ecs").describe_task_definition(taskDefinition=name)["taskDefinition"]
        return found["taskDefinitionArn"], [found.get("taskRoleArn", ""), found.get("executionRoleArn", "")]

    def cluster_arn(self, name: str) -> str:
        return name if name.startswith("arn:") else f"arn:aws:ecs:{self.region}:{self.account}:cluster/{name}"

    def key_arn(self, key_id: str | None) -> str:
        if key_id is None:  # a ciphertext's key: the stack's one key (the only key its code encrypts with)
            (key_id,) = [self.environment.deployed.physical[k] for k, v in self.environment.assembly.resources.items()
                         if v["Type"] == "AWS::KMS::Key"]
        return str(self.environment.session.client("kms").describe_key(KeyId=key_id)["KeyMetadata"]["Arn"])

    def resource_statements(self, resource: str, action: str) -> list[dict[str, Any]]:
        if resource.startswith("arn:aws:s3:::"):
            return self.bucket_policies.get(resource.removeprefix("arn:aws:s3:::").split("/", 1)[0], [])
        if action.startswith("sts:"):
            role = self.environment.session.client("iam").get_role(RoleName=resource.rsplit("/", 1)[-1])["Role"]
            statements = role["AssumeRolePolicyDocument"]["Statement"]
            return [statements] if isinstance(statements, dict) else list(statements)
        return []


def _lambdas_own(environment: Environment, function: str) -> Callable[[str, str], bool]:
    """The grants a function's role holds for Lambda itself, which its code never calls: its own log group (the
    runtime writes the function's output there), X-Ray's uploads (active tracing), its on-failure queue and, in a
    VPC, the network interfaces Lambda manages in its subnets."""
    from infra.constructs.access import VPC_INTERFACES  # lazy: imports aws_cdk (conftest skips the tier without it)

    resources = environment.assembly.resources
    (config,) = [v["Properties"] for k, v in resources.items() if v["Type"] == "AWS::Lambda::Function"
                 and environment.deployed.physical.get(k) == function] or [{}]
    group = config.get("LoggingConfig", {}).get("LogGroup", {}).get("Ref")
    own_group = environment.deployed.physical.get(group, f"/aws/lambda/{function}") if group else f"/aws/lambda/{function}"

    def own(action: str, resource: str) -> bool:
        return (action.startswith("xray:") or action in VPC_INTERFACES
                or (action.startswith("logs:") and f":log-group:{own_group}:" in resource)
                or (action.startswith("sqs:") and resource.endswith("-dlq")))
    return own


def test_every_call_the_functions_made_is_one_their_deployed_role_allows(environment: Environment) -> None:
    check_calls_allowed(environment)


def check_calls_allowed(environment: Environment) -> None:
    """After a module's runs: every AWS call each deployed function made (``lambda_bootstrap`` records them in the
    function's own process) is allowed by its deployed role's policies, resources and conditions evaluated
    (``iam_check``). What a role grants that no call used (beyond what Lambda itself uses) is printed (``-s``),
    to tighten least privilege: a report, not a failure (these runs do not exercise every path)."""
    from tests.deploy.iam_check import Request, allowed, requests_for, role_statements, unused_grants

    where = _Deployed(environment)
    iam = environment.session.client("iam")
    names = {environment.function(name): name for name in ("parser", "scheduler", "worker", "api", "asset_events")}
    statements: dict[str, list[dict[str, Any]]] = {}
    functions: dict[str, str] = {}  # role -> the function it runs
    made: dict[str, list[Request]] = {}
    denied: set[str] = set()
    for run in environment.runtime.invocations:
        role = run.role
        if role not in statements:
            statements[role] = role_statements(iam, role.rsplit("/", 1)[-1])
            functions[role] = run.function
        for call in run.calls:
            for request in requests_for(call, where):
                made.setdefault(role, []).append(request)
                if not allowed(statements[role], request, principal=role,
                               resource_statements=where.resource_statements(request.resource, request.action)):
                    denied.add(f"{names.get(run.function, run.function)} ({call['service']}:{call['operation']}): "
                               f"{request}")
    assert not denied, "calls the deployed roles would deny:\n" + "\n".join(sorted(denied))
    checked = {names.get(functions[role], functions[role]) for role in made}
    assert {"parser", "scheduler", "worker", "api", "fargate:updraft-dev-worker"} <= checked, checked
    for role in sorted(statements, key=lambda r: names.get(functions[r], functions[r])):
        function = functions[role]
        own = _lambdas_own(environment, function)
        unused: dict[str, list[str]] = {}
        for action, resource in unused_grants(statements[role], made.get(role, [])):
            if not own(action, resource):
                unused.setdefault(action, []).append(resource.split(":", 5)[-1])  # (the ARN's resource part)
        listed = "; ".join(f"{action} ({', '.join(resources)})" for action, resources in unused.items())
        print(f"{names.get(function, function)}: {len(made.get(role, []))} requests allowed; granted, never used "
              f"here: {listed or 'none'}")


# Last in the module, on the same deployment as the runs above (one deploy of the dev stack per session): the
# stand-ins create what moto skipped, the bucket policy among them, which denies requests without TLS (the
# embedded AWS's are plain HTTP, and moto enforces it).
def test_every_resource_of_the_dev_stack_is_created_or_stood_in_for(environment: Environment) -> None:
    """``cdk deploy -c env=dev``: the template reached CREATE_COMPLETE from its TemplateURL and every resource in it
    exists, created by CloudFormation or, for the types moto skips, by the stand-in of ``stand_ins.STAND_INS`` (a
    type moto skips that has no stand-in fails here, as does a stand-in moto no longer needs)."""
    from tests.deploy.stand_ins import STAND_INS, check_every_resource

    print(check_every_resource(environment))
    # Every stand-in is for a type of the default stack (the VPC-mode stack has the same ones: test_vpc_mode), so
    # one moto creates now is found stale here.
    assert set(STAND_INS) <= {resource["Type"] for resource in environment.assembly.resources.values()}
