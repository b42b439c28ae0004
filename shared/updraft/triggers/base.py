"""``airflow.triggers.base``: BaseTrigger, TriggerEvent and the task-ending events, with Airflow's shapes.

A trigger is what a task hands its wait to (``self.defer(trigger=...)``). Airflow runs ``run()`` in an always-on
triggerer; Updraft never runs it for the pure waits (``updraft.triggers.state_machine``): what it keeps is
``serialize()``, Airflow's contract that a trigger is rebuilt from its classpath and keyword arguments.
"""

from __future__ import annotations

import abc
import datetime as dt
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from updraft.model.deferrals import TRIGGER_FAIL_REPR, TRIGGER_TIMEOUT

__all__ = ["TRIGGER_FAIL_REPR", "TRIGGER_TIMEOUT", "BaseEventTrigger", "BaseTaskEndEvent", "BaseTrigger",
           "StartTriggerArgs", "TaskFailedEvent", "TaskSkippedEvent", "TaskSuccessEvent", "TriggerEvent"]


@dataclass
class StartTriggerArgs:
    """What a task that starts from its trigger (``start_from_trigger=True``) defers to, as Airflow declares it."""

    trigger_cls: str
    next_method: str
    trigger_kwargs: dict[str, Any] | None = None
    next_kwargs: dict[str, Any] | None = None
    timeout: dt.timedelta | None = None


class BaseTrigger(abc.ABC):
    """Base class for triggers: subclasses implement ``serialize()`` and ``run()`` as in Airflow."""

    supports_triggerer_queue: bool = True

    def __init__(self, **kwargs: Any) -> None:
        self.trigger_id: int | None = None
        self.task_id: str | None = None
        self.template_fields: tuple[str, ...] = ()
        self.template_ext: tuple[str, ...] = ()

    @property
    def log(self) -> logging.Logger:
        return logging.getLogger(f"airflow.triggers.{type(self).__name__}")

    @abc.abstractmethod
    def serialize(self) -> tuple[str, dict[str, Any]]:
        """(classpath, keyword arguments) that rebuild this trigger."""

    @abc.abstractmethod
    def run(self) -> AsyncIterator[TriggerEvent]:
        """Yield events (an async generator); Updraft does not call it for pure waits."""

    async def cleanup(self) -> None:  # noqa: B027 (Airflow's optional hook: overriding it is optional)
        """Called when the trigger is no longer needed (kept for Airflow's interface)."""

    async def on_kill(self) -> None:  # noqa: B027 (Airflow's optional hook)
        """Called when a user ends the deferred task (kept for Airflow's interface)."""

    @staticmethod
    def repr(classpath: str, kwargs: dict[str, Any]) -> str:
        kwargs_str = ", ".join(f"{k}={v}" for k, v in kwargs.items())
        return f"<{classpath} {kwargs_str}>"

    def __repr__(self) -> str:
        classpath, kwargs = self.serialize()
        return self.repr(classpath, kwargs)


class BaseEventTrigger(BaseTrigger):
    """Triggers usable by asset watchers in Airflow (event-driven scheduling is not implemented by Updraft)."""


class TriggerEvent:
    """Something a trigger fired; its ``payload`` reaches the task's ``method_name`` as ``event``."""

    def __init__(self, payload: Any) -> None:
        self.payload = payload

    def __repr__(self) -> str:
        return f"TriggerEvent<{self.payload!r}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TriggerEvent) and type(other) is type(self) and other.payload == self.payload

    __hash__ = None  # type: ignore[assignment]


class BaseTaskEndEvent(TriggerEvent):
    """An event that ends the task itself (``end_from_trigger``): no worker resumes it."""

    task_instance_state: str = ""

    def __init__(self, *, xcoms: dict[str, Any] | None = None) -> None:
        super().__init__(payload=self.task_instance_state)
        self.xcoms = xcoms


class TaskSuccessEvent(BaseTaskEndEvent):
    task_instance_state = "success"


class TaskFailedEvent(BaseTaskEndEvent):
    task_instance_state = "failed"


class TaskSkippedEvent(BaseTaskEndEvent):
    task_instance_state = "skipped"
