"""``airflow.triggers.base``."""

from updraft.triggers.base import (
    BaseEventTrigger,
    BaseTaskEndEvent,
    BaseTrigger,
    StartTriggerArgs,
    TaskFailedEvent,
    TaskSkippedEvent,
    TaskSuccessEvent,
    TriggerEvent,
)

__all__ = ["BaseEventTrigger", "BaseTaskEndEvent", "BaseTrigger", "StartTriggerArgs", "TaskFailedEvent",
           "TaskSkippedEvent", "TaskSuccessEvent", "TriggerEvent"]
