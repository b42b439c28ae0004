"""Sends each dispatch to the executor its task chose (``Dispatch.executor``: ``lambda`` or ``fargate``).

The scheduler holds one executor; tasks choose per task. A dispatch for an executor this environment does not
have (no Fargate cluster configured) is logged and left queued rather than raised: raising would stop the pass
for every other DAG, and the queued timeout gives the try back once the environment is fixed.

A task that outgrew Lambda (a try handed off to Fargate at Lambda's time or memory limit, ``runtime.handoff``)
is remembered in the store; with ``long_tasks`` (the store's ``dags_long_tasks``) its later Lambda dispatches go
to the executor recorded for it (with the Fargate size a memory hand-off chose). A DAG's records are read in one
request and remembered for ``REMEMBERED_S``: a pass sends its claims one dispatch at a time, and a read per
dispatch was a request per try on the way to its Invoke. A record written meanwhile (a hand-off in another
environment) is seen here within that time; a try sent before is one more Lambda try that may be handed off
again, as a try sent before the record existed is (hand-offs happen minutes into a try). Callback requests stay
on Lambda (they are short).
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from updraft.executors.base import Dispatch, Executor
from updraft.executors.callback_requests import DagCallbackRequest, TaskCallbackRequest
from updraft.executors.choice import DEFAULT_EXECUTOR

# DAG ids -> the recorded {"executor": ..., "cpu": ..., "memory": ...} of their tasks with a record, by
# (dag_id, task_id).
LongTasks = Callable[[Iterable[str]], dict[tuple[str, str], dict[str, Any]]]
# How long a DAG's records, as read, route its dispatches before they are read again.
REMEMBERED_S = 10.0

log = logging.getLogger(__name__)


class RoutingExecutor:
    def __init__(self, executors: Mapping[str, Executor], *, long_tasks: LongTasks | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.executors = dict(executors)
        self.long_tasks = long_tasks
        self._clock = clock
        self._lock = threading.Lock()  # a claim pass dispatches from several threads
        self._read: dict[str, tuple[float, dict[str, dict[str, Any]]]] = {}  # dag_id -> (when, task_id -> record)
        self.undeliverable_count = 0
        self.undeliverable: collections.deque[Dispatch] = collections.deque(maxlen=100)

    def route(self, items: list[Dispatch]) -> list[Dispatch]:
        """``items`` with each Lambda try of a task remembered as long sent to its recorded executor instead
        (as chosen if that read fails: the try then runs on Lambda and may be handed off again)."""
        candidates = {id(i): i for i in items if i.executor == DEFAULT_EXECUTOR
                      and not isinstance(i, DagCallbackRequest | TaskCallbackRequest)}
        if self.long_tasks is None or not candidates or not set(self.executors) - {DEFAULT_EXECUTOR}:
            return items
        try:
            recorded = self._recorded({i.key.dag_id for i in candidates.values()}, self.long_tasks)
        except Exception:
            log.exception("could not read which tasks outgrew Lambda; dispatching as chosen")
            return items
        routed = []
        for item in items:
            record = recorded[item.key.dag_id].get(item.key.task_id, {}) if id(item) in candidates else {}
            moved = record.get("executor") in self.executors
            routed.append(dataclasses.replace(item, executor=record["executor"], compute={**item.compute, **record})
                          if moved else item)
        return routed

    def _recorded(self, dag_ids: set[str], read: LongTasks) -> dict[str, dict[str, dict[str, Any]]]:
        """Each DAG's records by task id: as remembered when read less than ``REMEMBERED_S`` ago, else read now
        (the DAGs not remembered in one call; a failed read is not remembered)."""
        now = self._clock()
        with self._lock:
            known = {d: self._read[d][1] for d in dag_ids if d in self._read and now - self._read[d][0] < REMEMBERED_S}
        missing = dag_ids - set(known)
        if missing:
            fresh: dict[str, dict[str, dict[str, Any]]] = {dag_id: {} for dag_id in missing}
            for (dag_id, task_id), record in read(missing).items():
                fresh.setdefault(dag_id, {})[task_id] = record
            with self._lock:
                self._read.update({dag_id: (now, records) for dag_id, records in fresh.items()})
            known.update(fresh)
        return known

    @property
    def dispatches_over_network(self) -> bool:
        """Whether a claim pass may send through this from several threads (``scheduling.pass_invokes``): only
        when every executor behind it may."""
        return all(getattr(e, "dispatches_over_network", False) for e in self.executors.values())

    def dispatch(self, items: list[Dispatch]) -> None:
        groups: dict[str, list[Dispatch]] = {}
        for item in self.route(items):
            groups.setdefault(item.executor, []).append(item)
        for name, group in groups.items():
            executor = self.executors.get(name)
            if executor is None:
                log.error("no %r executor in this environment (have %s); %s stay queued", name,
                          sorted(self.executors), [f"{i.key.label} try {i.try_number}" for i in group])
                with self._lock:
                    self.undeliverable.extend(group)
                    self.undeliverable_count += len(group)
                continue
            executor.dispatch(group)

    @property
    def failures(self) -> int:
        """Dispatches not handed over so far: undeliverable here plus refused by the executors."""
        return self.undeliverable_count + sum(getattr(e, "failures", 0) for e in self.executors.values())
