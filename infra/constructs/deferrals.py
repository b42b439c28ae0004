"""The Step Functions state machine behind deferrable waits (a skeleton: nothing starts executions yet).

A deferred try gives up its slot; an execution started with ``{"resume_at": <ISO 8601 timestamp>, "dispatch":
<the worker's dispatch payload>}`` waits until ``resume_at`` and then invokes the worker asynchronously with
``dispatch``, exactly as the Lambda executor would. The worker's try fencing makes a late or duplicate resume
harmless, and its failures go to the worker's dead-letter queue like any other async invoke.

Nothing is granted ``states:StartExecution`` until the scheduler and worker start executions (the deferral
issue); the machine's own role may only invoke the worker and write its log group.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from updraft.resources import ResourceNames


class DeferralStateMachine(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, names: ResourceNames, worker: lambda_.IFunction,
                 retention: logs.RetentionDays, removal: RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        wait = sfn.Wait(self, "WaitUntilResumeAt", time=sfn.WaitTime.timestamp_path("$.resume_at"))
        resume = tasks.LambdaInvoke(self, "ResumeOnWorker", lambda_function=worker,
                                    invocation_type=tasks.LambdaInvocationType.EVENT,
                                    payload=sfn.TaskInput.from_json_path_at("$.dispatch"))
        self.log_group = logs.LogGroup(self, "Logs", retention=retention, removal_policy=removal)
        self.state_machine = sfn.StateMachine(
            self, "StateMachine", state_machine_name=names.deferral_state_machine,
            state_machine_type=sfn.StateMachineType.STANDARD,  # waits may last up to a year; Express stops at 5 min
            definition_body=sfn.DefinitionBody.from_chainable(wait.next(resume)),
            logs=sfn.LogOptions(destination=self.log_group, level=sfn.LogLevel.ERROR))
