"""A user's polling trigger for the tests: an async ``run()`` that fires once its name is in ``READY`` (the check
function runs in the test's process, so the test sets it)."""

from __future__ import annotations

import asyncio
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

READY: set[str] = set()


class BrokenTrigger(BaseTrigger):
    """Raises at its first look (a service answering 500, say)."""

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return f"{__name__}.BrokenTrigger", {}

    async def run(self):  # type: ignore[no-untyped-def]
        raise RuntimeError("the service answered 500")
        yield  # an async generator, as triggers are


class FlagTrigger(BaseTrigger):
    def __init__(self, name: str, poll_interval: float = 20.0) -> None:
        super().__init__()
        self.name = name
        self.poll_interval = poll_interval

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return f"{__name__}.FlagTrigger", {"name": self.name, "poll_interval": self.poll_interval}

    async def run(self):  # type: ignore[no-untyped-def]
        while True:
            if self.name in READY:
                yield TriggerEvent({"flag": self.name})
                return
            await asyncio.sleep(self.poll_interval)
