"""The one Amazon States Language definition deferred tries wait on: the CDK stack deploys it, and local mode's
engine (``updraft.local.step_functions``) runs the same document.

An execution's input is ``model.deferrals.execution_input``: ``{"kind": "wait" | "poll", "resume_at": <RFC 3339>,
"resume": <the worker payload>}``.

- ``wait`` (the time triggers): a Wait state until ``resume_at``, then an asynchronous invoke of the worker with
  ``resume``. Nothing runs while it waits: a wait of any length costs its state transitions only.
- ``poll`` (triggers that must look at something: files, keys, another DAG's state): the branch is in place for
  the check Lambda (issue 16, wave 2), which runs the trigger once per visit in a Wait/Choice loop with its
  interval. Until then it fails at once, and no try reaches it: a try deferring to such a trigger fails in its
  worker with a message naming the trigger.
"""

from __future__ import annotations

from typing import Any

WORKER_ARN_PLACEHOLDER = "${WorkerFunctionArn}"  # a definition substitution in the CDK stack
INVOKE_RESOURCE = "arn:aws:states:::lambda:invoke"


def definition(worker_function_arn: str = WORKER_ARN_PLACEHOLDER) -> dict[str, Any]:
    return {
        "Comment": "Updraft deferrals: wait for a deferred try's trigger, then resume the try on the worker",
        "StartAt": "TriggerKind",
        "States": {
            "TriggerKind": {
                "Type": "Choice",
                "Choices": [
                    {"Variable": "$.kind", "StringEquals": "wait", "Next": "WaitUntilResumeAt"},
                    {"Variable": "$.kind", "StringEquals": "poll", "Next": "PollTrigger"},
                ],
                "Default": "UnknownKind",
            },
            "WaitUntilResumeAt": {"Type": "Wait", "TimestampPath": "$.resume_at", "Next": "ResumeOnWorker"},
            "ResumeOnWorker": {
                "Type": "Task",
                "Resource": INVOKE_RESOURCE,
                "Parameters": {"FunctionName": worker_function_arn, "InvocationType": "Event",
                               "Payload.$": "$.resume"},
                "Retry": [{"ErrorEquals": ["Lambda.ServiceException", "Lambda.AWSLambdaException",
                                           "Lambda.SdkClientException", "Lambda.TooManyRequestsException"],
                           "IntervalSeconds": 2, "MaxAttempts": 6, "BackoffRate": 2.0}],
                "End": True,
            },
            # The check Lambda's loop goes here (Task -> Choice fired? -> ResumeOnWorker, else Wait -> Task).
            "PollTrigger": {"Type": "Fail", "Error": "Updraft.PollingTriggersNotAvailable",
                            "Cause": "polling triggers need the check Lambda, which is not deployed yet"},
            "UnknownKind": {"Type": "Fail", "Error": "Updraft.UnknownTriggerKind",
                            "Cause": "the execution input's kind is neither wait nor poll"},
        },
    }
