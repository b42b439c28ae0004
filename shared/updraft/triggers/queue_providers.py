"""``BaseMessageQueueProvider``: the common-messaging provider's base class for a queue kind, as Airflow 3.3 has it.

Provider packages subclass it at import (the amazon provider's SQS and Kinesis queues), so it must exist for their
modules to import. Updraft's ``MessageQueueTrigger`` does not dispatch through such classes: it knows SQS itself
(the environment's asset-events queue, ``updraft.triggers.aws_sources``) and refuses every other scheme when the
DAG file is parsed, naming it; a provider's queue class therefore never changes what a watcher does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class BaseMessageQueueProvider(ABC):
    """A queue kind: matched by ``scheme`` (or a queue URI), and the event trigger that watches it."""

    scheme: str | None = None

    def scheme_matches(self, scheme: str) -> bool:
        return self.scheme == scheme

    def queue_matches(self, queue: str) -> bool:
        return False

    @abstractmethod
    def trigger_class(self) -> type[Any]:
        """The event trigger class that watches this kind of queue."""

    def trigger_kwargs(self, queue: str, **kwargs: Any) -> dict[str, Any]:
        return {}
