"""Tasks that outgrew Lambda: one item per task, ``DAG#<dag_id>`` / ``LONG_TASK#<task_id>``, naming the executor
its tries go to from now on (``fargate``) and why (the Lambda time limit, or its memory).

Written by the worker that handed a try off (:mod:`updraft.runtime.handoff`), read by the routing executor when
it sends a Lambda dispatch (a Query of the DAG's records, which it remembers for a few seconds). A plain put:
writing it twice (a redelivered hand-off) stores the same fact. It lives in the DAG's partition, so deleting the
DAG deletes it. Its model is defined and bound here, beside its only user, on the table connection the other
models share.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Mapping
from typing import Any

from pynamodb.attributes import NumberAttribute, UnicodeAttribute

from updraft.store import keys
from updraft.store.attributes import DateTimeAttribute
from updraft.store.base import StoreBase
from updraft.store.config import StoreConfig
from updraft.store.models import Item, bind


class LongTaskItem(Item):
    dag_id = UnicodeAttribute()
    task_id = UnicodeAttribute()
    executor = UnicodeAttribute()
    reason = UnicodeAttribute()
    at = DateTimeAttribute()
    cpu = NumberAttribute(null=True)  # the Fargate size a memory hand-off chose (None: the task's own)
    memory = NumberAttribute(null=True)


@functools.cache
def _model(config: StoreConfig) -> type[LongTaskItem]:
    return bind(LongTaskItem, config)


class LongTaskStore(StoreBase):
    def remember_long_task(self, dag_id: str, task_id: str, *, executor: str, reason: str, now: dt.datetime,
                           compute: Mapping[str, int] | None = None) -> None:
        """Record that ``task_id`` of ``dag_id`` runs on ``executor`` from now on, why, and with which ``compute``
        (``cpu``/``memory``; none: the task's own)."""
        sizes = compute or {}
        _model(self.config)(keys.dag_pk(dag_id), keys.long_task_sk(task_id), dag_id=dag_id, task_id=task_id,
                            executor=executor, reason=reason, at=now, cpu=sizes.get("cpu"),
                            memory=sizes.get("memory")).save()

    def dags_long_tasks(self, dag_ids: Iterable[str]) -> dict[tuple[str, str], dict[str, Any]]:
        """(dag_id, task_id) -> ``{"executor": ..., "cpu": ..., "memory": ...}`` (sizes only where recorded), for
        every task of ``dag_ids`` with a record: one Query of each DAG's partition (its ``LONG_TASK#`` items, read
        eventually consistent: routing is a hint, and a record seconds old reaches it soon enough)."""
        M = _model(self.config)
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for dag_id in sorted(set(dag_ids)):
            for item in M.query(keys.dag_pk(dag_id), M.sk.startswith(keys.LONG_TASK_PREFIX)):
                sizes = {"cpu": item.cpu, "memory": item.memory}
                found[(item.dag_id, item.task_id)] = {"executor": item.executor,
                                                      **{k: int(v) for k, v in sizes.items() if v is not None}}
        return found

    def forget_long_task(self, dag_id: str, task_id: str) -> None:
        """Send the task's tries to the executor it chose again (safe to repeat)."""
        _model(self.config)(keys.dag_pk(dag_id), keys.long_task_sk(task_id)).delete()
