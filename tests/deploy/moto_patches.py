"""The few places where moto 5.2.5's CloudFormation differs from AWS's for this stack, mended for the deploy tier.

Each mend says what a real deploy relies on; none changes what the template asks for:

* ``AWS::KMS::Key`` with ``Tags``: CloudFormation tags are ``Key``/``Value``; moto hands them to KMS's tagger,
  which reads ``TagKey``/``TagValue``, and answers 500 (every CDK stack tags its key with the stack's tags).
* custom resources: moto sends their ``ResponseURL`` to ``host.docker.internal`` (where a Docker-run function
  would reach it); here functions run on this host, so the URL names the embedded AWS's own address. Its Step
  Functions' service integrations (the state machine's invoke of the worker) call the port of the same setting,
  read once at import: they are pointed at the embedded AWS too.
* ``AWS::CloudWatch::Alarm``: moto has no CloudFormation model for it, so it skips alarms, and then refuses the
  whole template once something reads an alarm's ``Arn`` (the dashboard's alarm widget: "Fn::GetAtt references
  undefined resource"). :class:`CfnAlarm` creates each alarm with moto's CloudWatch, as CloudFormation does.
* custom resources: AWS passes every ``ResourceProperties`` scalar as a string (``true`` -> ``"true"``); moto
  passes the template's JSON types. CDK's handlers are written for strings (:func:`as_cloudformation_sends`).
* ``AWS::Logs::LogGroup``'s ``Arn`` attribute: AWS gives ``arn:...:log-group:NAME:*`` (the group's streams: the
  form IAM matches stream actions against), moto gives it without ``:*``; the roles' policies name their log groups
  through it, so the IAM check judges them as AWS would only with AWS's form.
* ``AWS::ECS::TaskDefinition``: moto registers only the family, containers, volumes and memory; the task's roles,
  network mode, cpu, compatibilities and platform are dropped, so a RunTask of it would pass no role and the IAM
  check could not judge the ``iam:PassRole`` it implies. :func:`task_definition` registers all of them.
* ``AWS::EC2::VPC``: moto ignores ``EnableDnsHostnames`` and ``EnableDnsSupport`` (CDK's VPC turns both on), and its
  RunTask then fails reading a Fargate task's network interface's DNS name; they are set as the template says.
* ``AWS::StepFunctions::StateMachine``: moto creates it in its plain Step Functions backend even when executions
  run (``execute_state_machine``), whose API answers from another backend: the deployed machine would not exist
  for the functions. It is created where the API looks.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


class CfnAlarm:
    """An ``AWS::CloudWatch::Alarm`` created with moto's CloudWatch backend (a metric alarm: what the stack has)."""

    def __init__(self, alarm: Any) -> None:
        self.alarm = alarm

    @property
    def physical_resource_id(self) -> str:
        return str(self.alarm.name)

    def is_created(self) -> bool:
        return True

    def get_cfn_attribute(self, name: str) -> str:
        if name != "Arn":
            raise NotImplementedError(name)
        return str(self.alarm.alarm_arn)

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::CloudWatch::Alarm"

    @staticmethod
    def cloudformation_name_type() -> str:
        return "AlarmName"

    @classmethod
    def create_from_cloudformation_json(cls, resource_name: str, cloudformation_json: Any, account_id: str,
                                        region_name: str, **kwargs: Any) -> CfnAlarm:
        from moto.cloudwatch.models import cloudwatch_backends

        p = cloudformation_json["Properties"]
        alarm = cloudwatch_backends[account_id][region_name].put_metric_alarm(
            name=p.get("AlarmName", resource_name), namespace=p["Namespace"], metric_name=p["MetricName"],
            comparison_operator=p["ComparisonOperator"], evaluation_periods=int(p["EvaluationPeriods"]),
            period=int(p["Period"]), threshold=float(p["Threshold"]), statistic=p["Statistic"],
            description=p.get("AlarmDescription", ""), dimensions=p.get("Dimensions", []),
            alarm_actions=p.get("AlarmActions", []), treat_missing_data=p.get("TreatMissingData"))
        return cls(alarm)


@contextlib.contextmanager
def patched(host: str, port: int) -> Iterator[None]:
    from moto import settings
    from moto.cloudformation import parsing
    from moto.ec2.models.vpcs import VPC
    from moto.ecs.models import TaskDefinition
    from moto.kms.models import Key
    from moto.logs.models import LogGroup
    from moto.stepfunctions.models import StateMachine
    from moto.stepfunctions.parser.asl.utils import boto_client

    original_class_of = parsing.resource_class_from_type

    def class_of(resource_type: str) -> Any:
        return CfnAlarm if resource_type == CfnAlarm.cloudformation_type() else original_class_of(resource_type)

    original_create = Key.create_from_cloudformation_json.__func__  # type: ignore[attr-defined]

    def create_key(cls: Any, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str,
                   **kwargs: Any) -> Any:
        properties = cloudformation_json["Properties"]
        tags = [{"TagKey": t["Key"], "TagValue": t["Value"]} for t in properties.get("Tags", [])]
        fixed = {**cloudformation_json, "Properties": {**properties, "Tags": tags}}
        return original_create(cls, resource_name, fixed, account_id, region_name, **kwargs)

    original_attribute = LogGroup.get_cfn_attribute

    def log_group_attribute(group: Any, name: str) -> str:
        value = original_attribute(group, name)
        return f"{value}:*" if name == "Arn" else value

    original_vpc = VPC.create_from_cloudformation_json.__func__  # type: ignore[attr-defined]

    def create_vpc(cls: Any, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str,
                   **kwargs: Any) -> Any:
        vpc = original_vpc(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
        properties = cloudformation_json["Properties"]
        for name, attribute in (("EnableDnsHostnames", "enable_dns_hostnames"), ("EnableDnsSupport", "enable_dns_support")):
            if name in properties:
                setattr(vpc, attribute, str(properties[name]).lower() == "true")
        return vpc

    saved = (Key.create_from_cloudformation_json, settings.moto_server_host, settings.moto_server_port,
             TaskDefinition.create_from_cloudformation_json, VPC.create_from_cloudformation_json,
             StateMachine.create_from_cloudformation_json, boto_client.moto_server_port)
    boto_client.moto_server_port = lambda: str(port)  # type: ignore[assignment]
    StateMachine.create_from_cloudformation_json = classmethod(state_machine)  # type: ignore[assignment,method-assign]
    VPC.create_from_cloudformation_json = classmethod(create_vpc)  # type: ignore[assignment,method-assign]
    TaskDefinition.create_from_cloudformation_json = classmethod(task_definition)  # type: ignore[assignment,method-assign]
    LogGroup.get_cfn_attribute = log_group_attribute  # type: ignore[method-assign]
    parsing.resource_class_from_type = class_of  # type: ignore[assignment]
    Key.create_from_cloudformation_json = classmethod(create_key)  # type: ignore[assignment,method-assign]
    settings.moto_server_host = lambda: f"http://{host}"  # type: ignore[assignment]
    settings.moto_server_port = lambda: str(port)  # type: ignore[assignment]
    try:
        yield
    finally:
        parsing.resource_class_from_type = original_class_of  # type: ignore[assignment]
        LogGroup.get_cfn_attribute = original_attribute  # type: ignore[method-assign]
        (Key.create_from_cloudformation_json, settings.moto_server_host,  # type: ignore[method-assign]
         settings.moto_server_port, TaskDefinition.create_from_cloudformation_json,
         VPC.create_from_cloudformation_json, StateMachine.create_from_cloudformation_json,
         boto_client.moto_server_port) = saved  # type: ignore[assignment]


def as_cloudformation_sends(event: Any) -> Any:
    """A custom-resource request with its properties' scalars as strings, as CloudFormation sends them."""
    if not isinstance(event, dict) or "ResourceProperties" not in event:
        return event

    def strings(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strings(v) for k, v in value.items()}
        if isinstance(value, list):
            return [strings(v) for v in value]
        if isinstance(value, bool):
            return "true" if value else "false"
        return value if isinstance(value, str) else str(value)

    return {**event, "ResourceProperties": strings(event["ResourceProperties"])}


def task_definition(cls: Any, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str,
                    **kwargs: Any) -> Any:
    """``AWS::ECS::TaskDefinition`` registered with every property this stack gives it."""
    from moto.core.utils import pascal_to_camelcase, remap_nested_keys
    from moto.ecs.models import ecs_backends

    p = cloudformation_json["Properties"]
    platform = p.get("RuntimePlatform")
    return ecs_backends[account_id][region_name].register_task_definition(
        family=p["Family"], container_definitions=remap_nested_keys(p["ContainerDefinitions"], pascal_to_camelcase),
        volumes=remap_nested_keys(p.get("Volumes", []), pascal_to_camelcase), network_mode=p.get("NetworkMode"),
        requires_compatibilities=p.get("RequiresCompatibilities"), cpu=p.get("Cpu"), memory=p.get("Memory"),
        task_role_arn=p.get("TaskRoleArn"), execution_role_arn=p.get("ExecutionRoleArn"),
        runtime_platform=remap_nested_keys(platform, pascal_to_camelcase) if platform else None)


def state_machine(cls: Any, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str,
                  **kwargs: Any) -> Any:
    """``AWS::StepFunctions::StateMachine`` created in the backend Step Functions' API answers from."""
    from moto.core.utils import pascal_to_camelcase, remap_nested_keys
    from moto.stepfunctions.responses import get_backend

    p = cloudformation_json["Properties"]
    tags = [{"key": t["Key"], "value": t["Value"]} for t in p.get("Tags", [])]
    logging = remap_nested_keys(p["LoggingConfiguration"], pascal_to_camelcase) if "LoggingConfiguration" in p else None
    return get_backend(account_id, region_name).create_state_machine(
        p.get("StateMachineName", resource_name), p["DefinitionString"], p["RoleArn"], tags=tags,
        loggingConfiguration=logging)
