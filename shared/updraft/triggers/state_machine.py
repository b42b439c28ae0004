"""The one Amazon States Language definition deferred tries wait on: the CDK stack deploys it, and local mode's
engine (``updraft.local.step_functions``) runs the same document.

An execution's input is ``model.deferrals.execution_input``: ``{"kind": "wait" | "poll", "resume_at": <RFC 3339>,
"resume": <the worker payload>}``, ``model.deferrals.reschedule_input`` (``kind`` ``reschedule``), or
``model.wakeups.wake_input`` (``kind`` ``wake``).

- ``wait`` (the time triggers): a Wait state until ``resume_at``, then an asynchronous invoke of the worker with
  ``resume``. Nothing runs while it waits: a wait of any length costs its state transitions only.
- ``poll`` (triggers that must look at something: files, another DAG's state, a user's async trigger): a
  Task/Choice/Wait loop. The Task invokes the check function synchronously with the execution's state
  (``updraft.runtime.trigger_check``: one look at the trigger); its answer is the next state (``outcome``,
  ``poll_seconds``), so what the loop knows lives in the execution. ``fired`` or ``timed_out`` goes to the
  same resume invoke as a wait; anything else waits ``poll_seconds`` (the trigger's interval, doubling after each
  look for a sensor with ``exponential_backoff``, up to ``max_wait``: the check computes it, as ASL cannot
  multiply) and checks again. A wait costs one check invoke and a few state transitions per interval.
- ``reschedule`` (a reschedule-mode sensor's next poke): a Wait until ``resume_at``, the poke's date, then an
  asynchronous invoke of the worker with ``schedule`` (``ScheduleRunRequest``: schedule the sensor's run, which
  claims the poke), so the poke comes at its second, not at the next one-minute tick, for three state transitions.
- ``wake`` (``model.wakeups``: a scheduled run or a retry falls due): the same Wait, then the worker gets
  ``schedule`` (``RunDueRequest``: create the DAG's due runs and schedule them; or ``ScheduleRunRequest``: schedule
  the run whose retry is due), so they too start at their second, for three state transitions.
- ``watch`` (a polled ``AssetWatcher``: ``model.asset_watches``): the same Task/Choice/Wait loop, with no end while
  the watcher is wanted; each check (``updraft.runtime.asset_watch``) records a fired event as an asset event and the
  loop goes on watching, as Airflow's triggerer keeps a watcher's trigger running. ``gone`` ends it.
"""

from __future__ import annotations

from typing import Any

WORKER_ARN_PLACEHOLDER = "${WorkerFunctionArn}"  # a definition substitution in the CDK stack
CHECK_ARN_PLACEHOLDER = "${TriggerCheckFunctionArn}"
INVOKE_RESOURCE = "arn:aws:states:::lambda:invoke"


_LAMBDA_RETRY = [{"ErrorEquals": ["Lambda.ServiceException", "Lambda.AWSLambdaException",
                                  "Lambda.SdkClientException", "Lambda.TooManyRequestsException"],
                  "IntervalSeconds": 2, "MaxAttempts": 6, "BackoffRate": 2.0}]


def _invoke_worker(worker_function_arn: str, payload_path: str) -> dict[str, Any]:
    """A last state: the worker invoked asynchronously with the part of the input at ``payload_path``."""
    return {"Type": "Task", "Resource": INVOKE_RESOURCE,
            "Parameters": {"FunctionName": worker_function_arn, "InvocationType": "Event", "Payload.$": payload_path},
            "Retry": _LAMBDA_RETRY, "End": True}


def definition(worker_function_arn: str = WORKER_ARN_PLACEHOLDER,
               check_function_arn: str = CHECK_ARN_PLACEHOLDER) -> dict[str, Any]:
    return {
        "Comment": "Updraft deferrals: wait for a deferred try's trigger, then resume the try on the worker",
        "StartAt": "TriggerKind",
        "States": {
            "TriggerKind": {
                "Type": "Choice",
                "Choices": [
                    {"Variable": "$.kind", "StringEquals": "wait", "Next": "WaitUntilResumeAt"},
                    {"Variable": "$.kind", "StringEquals": "poll", "Next": "PollTrigger"},
                    {"Variable": "$.kind", "StringEquals": "reschedule", "Next": "WaitUntilNextPoke"},
                    {"Variable": "$.kind", "StringEquals": "wake", "Next": "WaitUntilDue"},
                    {"Variable": "$.kind", "StringEquals": "watch", "Next": "CheckWatcher"},
                ],
                "Default": "UnknownKind",
            },
            "WaitUntilResumeAt": {"Type": "Wait", "TimestampPath": "$.resume_at", "Next": "ResumeOnWorker"},
            "ResumeOnWorker": _invoke_worker(worker_function_arn, "$.resume"),
            "WaitUntilNextPoke": {"Type": "Wait", "TimestampPath": "$.resume_at", "Next": "ScheduleSensorRun"},
            "ScheduleSensorRun": _invoke_worker(worker_function_arn, "$.schedule"),
            "WaitUntilDue": {"Type": "Wait", "TimestampPath": "$.resume_at", "Next": "WakeScheduler"},
            "WakeScheduler": _invoke_worker(worker_function_arn, "$.schedule"),
            "PollTrigger": {
                "Type": "Task",
                "Resource": INVOKE_RESOURCE,
                "Parameters": {"FunctionName": check_function_arn, "InvocationType": "RequestResponse",
                               "Payload.$": "$"},
                "OutputPath": "$.Payload",
                "Retry": _LAMBDA_RETRY,
                "Next": "PollOutcome",
            },
            "PollOutcome": {
                "Type": "Choice",
                "Choices": [
                    {"Variable": "$.outcome", "StringEquals": "fired", "Next": "ResumeOnWorker"},
                    {"Variable": "$.outcome", "StringEquals": "timed_out", "Next": "ResumeOnWorker"},
                    {"Variable": "$.outcome", "StringEquals": "gone", "Next": "TryGone"},
                ],
                "Default": "WaitToPoll",
            },
            "WaitToPoll": {"Type": "Wait", "SecondsPath": "$.poll_seconds", "Next": "PollTrigger"},
            "TryGone": {"Type": "Succeed", "Comment": "the deferred try was cleared, marked or resumed: nothing "
                                                      "to resume"},
            "CheckWatcher": {
                "Type": "Task",
                "Resource": INVOKE_RESOURCE,
                "Parameters": {"FunctionName": check_function_arn, "InvocationType": "RequestResponse",
                               "Payload.$": "$"},
                "OutputPath": "$.Payload",
                "Retry": _LAMBDA_RETRY,
                "Next": "WatcherOutcome",
            },
            "WatcherOutcome": {
                "Type": "Choice",
                "Choices": [{"Variable": "$.outcome", "StringEquals": "gone", "Next": "WatcherStopped"}],
                "Default": "WaitToCheckWatcher",
            },
            "WaitToCheckWatcher": {"Type": "Wait", "SecondsPath": "$.poll_seconds", "Next": "CheckWatcher"},
            "WatcherStopped": {"Type": "Succeed", "Comment": "no unpaused DAG is scheduled on the watcher's asset "
                                                            "any more, its trigger changed, or the execution is "
                                                            "renewed (the sweep starts the next generation)"},
            "UnknownKind": {"Type": "Fail", "Error": "Updraft.UnknownTriggerKind",
                            "Cause": "the execution input's kind is not wait, poll, reschedule, wake or watch"},
        },
    }


# State transitions (what a Standard workflow bills) an execution of each kind takes at the least: a wait's and a
# next poke's three (TriggerKind, the Wait, the invoke); a poll's first look four (TriggerKind, the check, its
# Choice, the resume invoke), each further look three more (the check, its Choice, the Wait), which the try's
# record cannot know in advance and does not count.
_TRANSITIONS = {"wait": 3, "reschedule": 3, "poll": 4}


def transitions(kind: str) -> int:
    """The state transitions an execution of ``kind`` takes at the least (0: a kind no try's end starts)."""
    return _TRANSITIONS.get(kind, 0)
