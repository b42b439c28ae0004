"""Sends each dispatch to the executor its task chose (``Dispatch.executor``: ``lambda`` or ``fargate``).

The scheduler holds one executor; tasks choose per task. A dispatch for an executor this environment does not
have (no Fargate cluster configured) is logged and left queued rather than raised: raising would stop the pass
for every other DAG, and the queued timeout gives the try back once the environment is fixed.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Mapping

from updraft.executors.base import Dispatch, Executor

log = logging.getLogger(__name__)


class RoutingExecutor:
    def __init__(self, executors: Mapping[str, Executor]) -> None:
        self.executors = dict(executors)
        self.undeliverable_count = 0
        self.undeliverable: collections.deque[Dispatch] = collections.deque(maxlen=100)

    def dispatch(self, items: list[Dispatch]) -> None:
        groups: dict[str, list[Dispatch]] = {}
        for item in items:
            groups.setdefault(item.executor, []).append(item)
        for name, group in groups.items():
            executor = self.executors.get(name)
            if executor is None:
                log.error("no %r executor in this environment (have %s); %s stay queued", name,
                          sorted(self.executors), [f"{i.key.label} try {i.try_number}" for i in group])
                self.undeliverable.extend(group)
                self.undeliverable_count += len(group)
                continue
            executor.dispatch(group)

    @property
    def failures(self) -> int:
        """Dispatches not handed over so far: undeliverable here plus refused by the executors."""
        return self.undeliverable_count + sum(getattr(e, "failures", 0) for e in self.executors.values())
