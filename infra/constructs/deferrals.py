"""The Step Functions state machine deferred tries wait on: ``updraft.triggers.state_machine``'s definition, the
one local mode's engine runs too (with the worker's ARN in it).

A try that defers starts an execution (its worker's role may ``states:StartExecution`` on this machine only); the
execution waits until the trigger's time, then invokes the worker asynchronously with the resume payload, and the
worker fences the resume with the try's token, so a late or duplicate resume is harmless. Ending a deferred try
(the API's clears, marks and deletions, the scheduler's dagrun timeout) stops its execution (``StopExecution`` on
this machine's executions only). A polling trigger's execution invokes the trigger-check function synchronously
once per interval (``updraft.runtime.trigger_check``). The machine's own role may only invoke those two functions and
write its log group; a
failed resume invoke is retried on Lambda's transient errors and logged at ERROR, and the scheduler resumes a try
whose resume never came (``scheduling.deferrals.overdue_resume``).
"""

from __future__ import annotations

import json

from aws_cdk import RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from updraft.resources import ResourceNames
from updraft.triggers.state_machine import definition


class DeferralStateMachine(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, names: ResourceNames, worker: lambda_.IFunction,
                 check: lambda_.IFunction, retention: logs.RetentionDays, removal: RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        self.log_group = logs.LogGroup(self, "Logs", log_group_name=names.deferral_log_group, retention=retention,
                                       removal_policy=removal)
        self.state_machine = sfn.StateMachine(
            self, "StateMachine", state_machine_name=names.deferral_state_machine,
            state_machine_type=sfn.StateMachineType.STANDARD,  # waits may last up to a year; Express stops at 5 min
            # The worker's ARN is a token inside the JSON text: CDK renders the text as an Fn::Join around it.
            definition_body=sfn.DefinitionBody.from_string(json.dumps(definition(worker.function_arn,
                                                                                  check.function_arn))),
            logs=sfn.LogOptions(destination=self.log_group, level=sfn.LogLevel.ERROR))
        worker.grant_invoke(self.state_machine)
        check.grant_invoke(self.state_machine)
