"""A run's waiting instances, found without reading the run: the sparse ``waiting_tis`` index.

A scheduled instance that a claim refused carries its run (``waiting_pk``) and its place in Airflow's claim
order (``waiting_sk``: ``keys.waiting_sk``) as long as it waits. The keys ride in the writes that already say why
it waits and that end its wait, so they cost no request of their own:

- set by the write that stores its first blocked reason (its creation as scheduled by a pass that refused it, or
  ``set_blocked_reason``), when the caller asks (the scheduler does where the index pays: a large or mapped run,
  ``scheduling.waiting_claims.index_pays``);
- removed by every state write that moves it out of scheduled (``queue_ti`` above all), by a reason removed, and
  by a clear (``reset_ti``).

Only waiting instances are in the index, so it costs one index write per instance that waits and nothing for
the others; keys only, so the reason changing (or any other attribute) never writes to it. It is eventually
consistent: a hit is a candidate, read strongly before it is claimed, and the claim's conditional write is the
guard. An instance stored scheduled without a reason (the mini scheduler leaves most reasons to the tick) is not
found here: the whole-run evaluation still finds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pynamodb.expressions.update import Action

from updraft.model.records import TaskInstance, TIKey
from updraft.model.states import TaskInstanceState
from updraft.store import keys
from updraft.store.base import StoreBase
from updraft.store.models import TaskInstanceItem
from updraft.store.tables import WAITING_INDEX


def waiting_keys(key: TIKey, priority_weight: int) -> tuple[str, str]:
    """The index keys of ``key`` while it waits."""
    return keys.run_pk(key.dag_id, key.run_id), keys.waiting_sk(priority_weight, key.map_index, key.task_id)


def mark_created(item: TaskInstanceItem, ti: TaskInstance) -> None:
    """An instance created scheduled with a blocked reason waits: its item carries the index keys."""
    if ti.state == TaskInstanceState.SCHEDULED and ti.blocked_reason:
        item.waiting_pk, item.waiting_sk = waiting_keys(ti.key, ti.priority_weight)


def transition_actions(T: type[TaskInstanceItem], key: TIKey, state: TaskInstanceState,
                       fields: Mapping[str, Any], *, enter: bool) -> list[Action]:
    """What a state write does to the index keys: out of scheduled, or its reason removed, the wait ended; a
    scheduled instance written with a reason and its priority weight waits (``enter``: the caller indexes it)."""
    if state != TaskInstanceState.SCHEDULED or ("blocked_reason" in fields and not fields["blocked_reason"]):
        return leave_actions(T)
    if enter and fields.get("blocked_reason") and fields.get("priority_weight") is not None:
        return enter_actions(T, key, int(fields["priority_weight"]))
    return []


def enter_actions(T: type[TaskInstanceItem], key: TIKey, priority_weight: int) -> list[Action]:
    pk, sk = waiting_keys(key, priority_weight)
    return [T.waiting_pk.set(pk), T.waiting_sk.set(sk)]


def leave_actions(T: type[TaskInstanceItem]) -> list[Action]:
    return [T.waiting_pk.remove(), T.waiting_sk.remove()]


class WaitingStore(StoreBase):
    def waiting_tis(self, dag_id: str, run_id: str, *, limit: int) -> list[TIKey]:
        """The first ``limit`` instances of the run's waiting index, in claim order: one Query of index keys,
        eventually consistent (a hit may have been claimed meanwhile; one just refused may be missing). Read raw:
        only each entry's sort key is used, and a model built per entry cost more than the request (~50 us each,
        a hand-over lists up to a run's width)."""
        answer = self.models.task_instance._get_connection().query(
            keys.run_pk(dag_id, run_id), index_name=WAITING_INDEX, limit=limit)
        return [TIKey(dag_id, run_id, *keys.ti_key_parts(entry["sk"]["S"])) for entry in answer.get("Items", ())]
