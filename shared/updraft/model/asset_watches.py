"""A polled asset watcher, as its Step Functions execution is named and started (``updraft.scheduling.asset_watchers``
decides which run; ``updraft.runtime.asset_watch`` is one check of one).

One execution per watcher of an asset, named from what it watches (the asset, the watcher's name, the trigger's
classpath and keyword arguments) and a generation: a repeated start of a generation is ``ExecutionAlreadyExists``
(harmless), a changed trigger is another name (the old execution is stale), and a watcher stopped by a pause is
started again under the next generation (Step Functions never reuses the name of an execution it still keeps).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from typing import Any

WATCH_KIND = "watch"  # the state machine's kind for a watcher's Task/Choice/Wait loop
POLL_SOURCE = "poll"  # a watcher's ``source`` when Updraft polls its trigger (``triggers.aws_sources.watch_of``)
EXECUTION_PREFIX = "watch-"


@dataclasses.dataclass(frozen=True)
class PolledWatch:
    """One asset's watcher whose trigger is polled: the asset (id, name, uri, group) and the watcher as stored."""

    asset_id: int
    asset_name: str
    uri: str
    group: str
    name: str
    classpath: str
    kwargs: dict[str, Any]

    @property
    def digest(self) -> str:
        """Stable over what the watcher watches: the execution's name stem."""
        body = json.dumps([self.asset_name, self.uri, self.name, self.classpath, self.kwargs], sort_keys=True,
                          default=str)
        return hashlib.sha256(body.encode()).hexdigest()[:40]

    def execution_name(self, generation: int) -> str:
        return f"{EXECUTION_PREFIX}{self.digest}-g{generation}"

    def to_input(self, generation: int, now: dt.datetime) -> dict[str, Any]:
        """The execution's input (the state machine's contract: ``kind``; for the check: the watch, its
        execution's name, the count of checks so far and when the next is due)."""
        return {"kind": WATCH_KIND, "execution": self.execution_name(generation), "seq": 0,
                "due_at": now.isoformat(), "watch": dataclasses.asdict(self)}

    @classmethod
    def from_input(cls, state: dict[str, Any]) -> PolledWatch:
        watch = state.get("watch")
        if not isinstance(watch, dict):
            raise ValueError("a watch check's input has no watch")
        return cls(**watch)


def is_watch_execution(name: str) -> bool:
    return name.startswith(EXECUTION_PREFIX)


def digest_of(name: str) -> str:
    """The watcher's digest of one of its executions' names."""
    return name[len(EXECUTION_PREFIX):].rpartition("-g")[0]
