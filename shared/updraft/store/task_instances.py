"""The task-instance aggregate: one item per (task, map index) in its run's partition, fenced by ``try_id``,
and the tries it recorded (``TRY#`` items: Airflow's task instance history) next to it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Iterable, Mapping
from typing import Any

from pynamodb.constants import UPDATED_OLD
from pynamodb.exceptions import UpdateError
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.operand import Path
from pynamodb.expressions.update import Action

from updraft.model.records import TaskInstance, TIKey
from updraft.model.states import TaskInstanceState
from updraft.store import keys, waiting
from updraft.store.api import RunEnds
from updraft.store.base import StoreBase
from updraft.store.models import TaskInstanceItem
from updraft.store.writes import (
    TransactWrite,
    acknowledged,
    all_of,
    any_of,
    condition_failed,
    conditional,
    item_absent,
    item_present,
    past_conflicts,
    resent,
    set_actions,
    update_quietly,
    write_reporting,
    write_token,
)

_TI_FIELDS = {f.name for f in dataclasses.fields(TaskInstance)}
# A recorded try leaves out the rendered fields: its worker writes them on the item after the try started, so the
# instance a try ends with holds the previous try's (and Airflow's task instance history has none).
# Nor the ticket: a recorded try holds nothing.
_TRY_FIELDS = _TI_FIELDS - {"rendered_fields", "ticket"}
_TI_IDENTITY = {"dag_id", "run_id", "task_id", "map_index", "state"}
# A run's ENDS item: counters of ended instances ("ended#<task_id>", "ended#" for leaves), the counted mapped
# tasks' expansions ("expanded#<task_id>") and the waiting mark.
_ENDED = "ended#"
_EXPANDED = "expanded#"
_WAITING = "waiting"
_LIVE_STATES = (str(TaskInstanceState.QUEUED), str(TaskInstanceState.RUNNING))


# ----------------------------------------------------------------------------------------- named conditions
def ti_absent(T: type[TaskInstanceItem]) -> Condition:
    """Never touched: the write creates the item, and of two creators one wins."""
    return item_absent(T)


def ti_in_states(T: type[TaskInstanceItem], states: Iterable[str]) -> Condition:
    return T.state.is_in(*states)


def try_matches(T: type[TaskInstanceItem], try_id: str) -> Condition:
    """The item still belongs to this try: a stale worker or a superseded claim loses (fencing)."""
    return T.try_id == try_id


def ti_stateless(T: type[TaskInstanceItem]) -> Condition:
    """No state: never touched (absent), or cleared (the item keeps its try number, so the next try counts on)."""
    return T.state.does_not_exist()


def ti_cleared(T: type[TaskInstanceItem]) -> Condition:
    """The item exists without a state: a clear reset it; writes to it update it, keeping its try number."""
    return all_of(item_present(T), T.state.does_not_exist())


def ti_in_state_or_none(T: type[TaskInstanceItem], state: TaskInstanceState | None) -> Condition:
    return ti_stateless(T) if state is None else T.state == str(state)


def _ti_from_item(item: TaskInstanceItem) -> TaskInstance:
    return TaskInstance(
        dag_id=item.dag_id, run_id=item.run_id, task_id=item.task_id, map_index=int(item.map_index),
        state=TaskInstanceState(item.state) if item.state else None, try_number=int(item.try_number),
        try_id=item.try_id, pool=item.pool, pool_slots=int(item.pool_slots),
        priority_weight=int(item.priority_weight), executor=item.executor, queued_at=item.queued_at,
        start_date=item.start_date, end_date=item.end_date, next_retry_at=item.next_retry_at,
        lease_expires_at=item.lease_expires_at, ticket=item.ticket,
        hostname=item.hostname, xcom_length=None if item.xcom_length is None else int(item.xcom_length),
        note=item.note, blocked_reason=item.blocked_reason,
        max_tries=None if item.max_tries is None else int(item.max_tries),
        rendered_fields=item.rendered_fields, trigger=item.trigger, next_method=item.next_method,
        next_kwargs=item.next_kwargs, reschedule_count=int(item.reschedule_count or 0),
        first_reschedule_date=item.first_reschedule_date, rescheduled_try_id=item.rescheduled_try_id,
        hitl=item.hitl, usage=item.usage,
    )


def _attribute(name: str) -> Path:
    """A top-level attribute named ``name`` as is: a task id in a task group has a dot, which a string path would
    take for a nested map's (an update of a path that does not exist fails)."""
    return Path([name])


def run_ends(raw: Mapping[str, Any]) -> RunEnds:
    """A run's ENDS item as read (low-level attribute values), or nothing counted when it has none yet."""
    counts: dict[str | None, int] = {name.removeprefix(_ENDED) or None: int(value["N"])
                                     for name, value in raw.items() if name.startswith(_ENDED)}
    expanded = {name.removeprefix(_EXPANDED): int(value["N"])
                for name, value in raw.items() if name.startswith(_EXPANDED)}
    waiting = raw.get(_WAITING, {}).get("S")
    return RunEnds(counts, waiting, expanded)


class TaskInstanceStore(StoreBase):
    def _ti_keys(self, key: TIKey) -> tuple[str, str]:
        return self.ti_pk(*key), keys.ti_sk(key.task_id, key.map_index)

    def _ti_row(self, key: TIKey) -> TaskInstanceItem:
        return self.models.task_instance(*self._ti_keys(key))

    def _carries(self, key: TIKey, token: str) -> bool:
        """The instance's last state write is the one with ``token``: ours landed, its acknowledgement was lost."""
        T = self.models.task_instance
        try:
            item = T.get(*self._ti_keys(key), consistent_read=True, attributes_to_get=["write_token"])
        except T.DoesNotExist:
            return False
        return item.write_token == token

    def get_run_tis(self, dag_id: str, run_id: str) -> list[TaskInstance]:
        T = self.models.task_instance
        return [_ti_from_item(i) for i in self.query_run(T, dag_id, run_id, keys.TI_PREFIX)]

    def count_ends(self, dag_id: str, run_id: str, task_ids: Iterable[str | None]) -> RunEnds:
        """Count one more ended upstream instance of each fan-in of ``task_ids`` (None: one more ended leaf; a
        counted mapped task: one more of its own ended instances, never a fan-in's id, as a counted fan-in has no
        mapped upstream), in one small UpdateItem instead of reading every upstream instance. The counts only say
        when to look: callers count once per ended try (after its fenced end won) and read the run before they
        decide, so a count lost to a crash leaves the decision to the tick, and one made twice (a cleared upstream
        that ran again) costs an early look, never a wrong decision."""
        data = self.models.task_instance._get_connection().update_item(
            keys.run_ends_pk(dag_id, run_id), keys.RUN_ENDS_SK,
            actions=[_attribute(_ENDED + (t or "")).add(1) for t in dict.fromkeys(task_ids)],
            return_values="ALL_NEW")
        return run_ends(data.get("Attributes", {}))

    def record_expansions(self, dag_id: str, run_id: str, expanded: Mapping[str, int]) -> None:
        """One UpdateItem SETting each task's instance count: idempotent (evaluations racing to expand the same
        task write the same number), and made before the instances exist, so an end never finds them without it
        (a crash between leaves the number with no instance: the next expansion writes it again)."""
        if expanded:
            self.models.task_instance._get_connection().update_item(
                keys.run_ends_pk(dag_id, run_id), keys.RUN_ENDS_SK,
                actions=[_attribute(_EXPANDED + task_id).set(n) for task_id, n in sorted(expanded.items())])

    def mark_waiting(self, dag_id: str, run_id: str) -> bool:
        token = write_token()
        answer = self.models.task_instance._get_connection().update_item(
            keys.run_ends_pk(dag_id, run_id), keys.RUN_ENDS_SK, actions=[Path(_WAITING).set(token)],
            return_values=UPDATED_OLD)
        before = answer.get("Attributes", {}).get(_WAITING, {}).get("S")
        return before is None or before == token  # none before, or our own write met by its resent copy

    def clear_waiting(self, dag_id: str, run_id: str, token: str) -> bool:
        connection = self.models.task_instance._get_connection()
        return conditional(lambda: connection.update_item(
            keys.run_ends_pk(dag_id, run_id), keys.RUN_ENDS_SK, actions=[Path(_WAITING).remove()],
            condition=Path(_WAITING) == token))

    def get_ti(self, key: TIKey) -> TaskInstance | None:
        T = self.models.task_instance
        try:
            item = T.get(*self._ti_keys(key), consistent_read=True)
        except T.DoesNotExist:
            return None
        return _ti_from_item(item)

    def transition_ti(self, key: TIKey, *, expected: Iterable[TaskInstanceState | None],
                      state: TaskInstanceState, expected_try_id: str | None = None,
                      fields: Mapping[str, Any] | None = None, waiting_index: bool = False) -> bool:
        """The one conditional task-instance write behind the named transitions below (callers outside the
        store use those, so each write says what it is; the ``Store`` contract has no generic transition).

        Moves the instance to ``state`` only if it is in one of ``expected`` (None: no state, so the item does not
        exist yet and this creates it, or a clear reset it and this updates it) and, when given, its try_id
        matches (fencing a stale worker). ``fields`` are other TaskInstance attributes to set in the same write.
        ``waiting_index``: an instance written scheduled with a blocked reason enters its run's waiting index
        (``store.waiting``); any write out of scheduled leaves it.
        """
        T = self.models.task_instance
        expected = set(expected)
        fields = dict(fields or {})
        unknown = set(fields) - (_TI_FIELDS - _TI_IDENTITY)
        if unknown:
            raise ValueError(f"transition_ti: {sorted(unknown)} are not settable TaskInstance fields")
        if not expected:
            return False
        token = write_token()
        landed = functools.partial(self._carries, key, token)
        if expected == {None}:
            ti = TaskInstance(key.dag_id, key.run_id, key.task_id, key.map_index, state=state, **fields)
            item = T(*self._ti_keys(key), **{f: getattr(ti, f) for f in _TI_FIELDS})
            item.state = str(state)
            item.write_token = token
            if waiting_index:
                waiting.mark_created(item, ti)
            condition = ti_absent(T)
            if expected_try_id is not None:
                # cannot hold on an absent item: False, as asked
                condition = all_of(condition, try_matches(T, expected_try_id))
            written = write_reporting(item, condition=condition)
            found = written.item or {}
            if written.landed or (written.resent and found.get("write_token", {}).get("S") == token):
                return True  # (a resent put refused by its own effect: ours, its acknowledgement lost)
            if expected_try_id is not None or "state" in found:
                return False  # (an instance with a state: a creation race lost, told by the item it returns)
            # The item exists without a state: a cleared one is updated instead, so it keeps its try number.
            return acknowledged(lambda: update_quietly(self._ti_row(key),
                                                       self._ti_actions(T, key, state, fields, token,
                                                                        waiting_index),
                                                       ti_cleared(T)), landed)
        actions = self._ti_actions(T, key, state, fields, token, waiting_index)
        condition = ti_in_states(T, sorted(str(s) for s in expected if s is not None))
        if None in expected:
            # The update may create the item, so it carries its identity; a cleared item (no state) matches too.
            actions += [T.dag_id.set(key.dag_id), T.run_id.set(key.run_id), T.task_id.set(key.task_id),
                        T.map_index.set(key.map_index)]
            condition = any_of(ti_stateless(T), condition)
        if expected_try_id is not None:
            condition = all_of(condition, try_matches(T, expected_try_id))
        row = self._ti_row(key)
        return acknowledged(lambda: update_quietly(row, actions, condition), landed)

    def transition_item(self, key: TIKey, *, expected: Iterable[TaskInstanceState | None],
                        state: TaskInstanceState, ticket: str | None, held_ticket: str | None,
                        expected_try_id: str | None = None, fields: Mapping[str, Any] | None = None) -> TransactWrite:
        """``transition_ti``'s write as one item of a transaction (``updraft.limits`` adds its counters), built
        and not sent, with the holder's ticket: the write lands only if the instance carries ``held_ticket``
        (None: no ticket), and leaves it carrying ``ticket`` (None: removed).

        The same conditions as ``transition_ti``: in one of ``expected`` (None: stateless, i.e. absent, so the
        write creates it with its identity, or cleared), and ``expected_try_id`` when given; the same actions
        (``state``, ``fields``, a fresh write token, the waiting index left or entered as ``transition_ti``
        does without ``waiting_index``). A transaction cannot hold a put and its fallback update, so an instance
        created here is created by an update (identity and ``fields``; unset attributes read as their defaults).
        ``landed`` reads the item's write token.
        """
        T = self.models.task_instance
        expected = set(expected)
        fields = dict(fields or {})
        unknown = set(fields) - (_TI_FIELDS - _TI_IDENTITY - {"ticket"})
        if unknown:
            raise ValueError(f"transition_item: {sorted(unknown)} are not settable TaskInstance fields")
        if not expected:
            raise ValueError("transition_item: no expected state")
        token = write_token()
        actions = self._ti_actions(T, key, state, fields, token, False)
        actions.append(T.ticket.remove() if ticket is None else T.ticket.set(ticket))
        states = sorted(str(s) for s in expected if s is not None)
        alternatives = [ti_in_states(T, states)] if states else []
        if None in expected:
            actions += [T.dag_id.set(key.dag_id), T.run_id.set(key.run_id), T.task_id.set(key.task_id),
                        T.map_index.set(key.map_index)]
            alternatives.append(ti_stateless(T))
        condition = any_of(*alternatives)
        if expected_try_id is not None:
            condition = all_of(condition, try_matches(T, expected_try_id))
        condition = all_of(condition, T.ticket.does_not_exist() if held_ticket is None else T.ticket == held_ticket)
        item = self._ti_row(key).get_update_kwargs_from_instance(actions, condition)
        return TransactWrite({"Update": item}, functools.partial(self._carries, key, token))

    def ticket_item(self, key: TIKey, *, ticket: str | None, held_ticket: str) -> TransactWrite:
        """The instance's ticket alone changed, as one item of a transaction (``updraft.limits.release`` adds the
        gives): lands only while the instance carries ``held_ticket``, and leaves it carrying ``ticket`` (None:
        removed). For a try whose state write went before its release (a transition that does not carry the
        release yet); ``landed`` reads the item's write token."""
        T = self.models.task_instance
        token = write_token()
        actions: list[Action] = [T.write_token.set(token),
                                 T.ticket.remove() if ticket is None else T.ticket.set(ticket)]
        item = self._ti_row(key).get_update_kwargs_from_instance(actions, T.ticket == held_ticket)
        return TransactWrite({"Update": item}, functools.partial(self._carries, key, token))

    def transaction_target(self) -> tuple[Any, str]:
        """The low-level DynamoDB client this store writes with and its table's name (``updraft.limits.Table``'s),
        so a transaction shares the store's connection, credentials and endpoint."""
        return self.models.task_instance._get_connection().connection.client, self.config.table_name

    @staticmethod
    def _ti_actions(T: type[TaskInstanceItem], key: TIKey, state: TaskInstanceState, fields: dict[str, Any],
                    token: str, waiting_index: bool) -> list[Action]:
        if state == TaskInstanceState.QUEUED and "blocked_reason" not in fields:
            fields["blocked_reason"] = None  # queued: whatever held it back no longer does
        actions: list[Action] = [T.state.set(str(state)), T.write_token.set(token),
                                 *waiting.transition_actions(T, key, state, fields, enter=waiting_index)]
        for name, value in fields.items():
            attr = getattr(T, name)
            if value is None:
                actions.append(attr.remove())
            else:
                actions.append(attr.set(value))
        return actions

    # ------------------------------------------------------------------- named transitions over transition_ti
    # Each goes through ``transition_ti`` (looked up on the instance), so one override of it sees every state
    # written by a named transition: ``updraft dags test`` prints each change that way.
    def create_ti(self, key: TIKey, *, state: TaskInstanceState, fields: Mapping[str, Any] | None = None,
                  waiting_index: bool = False) -> bool:
        """Create a never-touched instance in ``state`` (scheduled, skipped by a branch...); False if it exists.
        ``waiting_index``: created scheduled with a blocked reason, it enters its run's waiting index."""
        return self.transition_ti(key, expected=[None], state=state, fields=fields, waiting_index=waiting_index)

    def queue_ti(self, key: TIKey, *, expected: TaskInstanceState | None, fields: Mapping[str, Any]) -> bool:
        """The claim: ``expected`` (scheduled, or None to create it claimed) -> queued with the new try's
        fields; its blocked reason is removed in the same write. Of two claimers one wins."""
        return self.transition_ti(key, expected=[expected], state=TaskInstanceState.QUEUED, fields=fields)

    def end_try(self, key: TIKey, *, try_id: str, state: TaskInstanceState, fields: Mapping[str, Any]) -> bool:
        """Record a running try's outcome, only while that try is still the running one (fencing)."""
        return self.transition_ti(key, expected=[TaskInstanceState.RUNNING], state=state, expected_try_id=try_id,
                                  fields=fields)

    def apply_ti_change(self, key: TIKey, *, expected: TaskInstanceState | None, state: TaskInstanceState,
                        expected_try_id: str | None = None, fields: Mapping[str, Any] | None = None) -> bool:
        """One change a run's evaluation decided (upstream_failed, skipped, a backstop's failure, ...):
        ``expected`` -> ``state``, fenced by ``expected_try_id`` when given."""
        return self.transition_ti(key, expected=[expected], state=state, expected_try_id=expected_try_id,
                                  fields=fields)

    def mark_ti(self, key: TIKey, *, expected: TaskInstanceState | None, state: TaskInstanceState,
                expected_try_id: str | None = None, fields: Mapping[str, Any] | None = None) -> bool:
        """A user's mark (``PATCH`` a task instance or a run): ``expected`` -> ``state``, fenced on the try that
        held it when read, so a worker that ended it meanwhile wins and its own outcome is not overwritten."""
        return self.transition_ti(key, expected=[expected], state=state, expected_try_id=expected_try_id,
                                  fields=fields)

    def set_ti_note(self, key: TIKey, note: str | None) -> None:
        """Set (None: remove) a user's note on an instance; a never-touched one gets an item without a state,
        which the scheduler treats as untouched."""
        T = self.models.task_instance
        actions = [T.note.remove() if note is None else T.note.set(note), T.dag_id.set(key.dag_id),
                   T.run_id.set(key.run_id), T.task_id.set(key.task_id), T.map_index.set(key.map_index)]
        update_quietly(self._ti_row(key), actions, None)

    # ------------------------------------------------------------------------------- clearing and recorded tries
    def reset_ti(self, key: TIKey, *, expected: TaskInstanceState | None, expected_try_id: str | None,
                 fields: Mapping[str, Any]) -> bool:
        """A clear: ``expected`` -> no state, only while the instance is still in ``expected`` and held by
        ``expected_try_id`` (when it had a try). The try id goes with it, so the cleared try's worker loses every
        later write (heartbeat, outcome); the item keeps its try number, so the next claim counts on from it."""
        token = write_token()
        actions, condition = self._reset(key, expected=expected, expected_try_id=expected_try_id, fields=fields,
                                         token=token)
        return acknowledged(lambda: update_quietly(self._ti_row(key), actions, condition),
                            functools.partial(self._carries, key, token))

    def reset_item(self, key: TIKey, *, expected: TaskInstanceState | None, expected_try_id: str | None,
                   fields: Mapping[str, Any], held_ticket: str) -> TransactWrite:
        """``reset_ti``'s write as one item of a transaction (``updraft.limits.release`` adds the gives), built and
        not sent: the same conditions plus the instance carrying ``held_ticket``, and its ticket removed, so a
        clear and the release of what the cleared try held land together. ``landed`` reads the write token."""
        T = self.models.task_instance
        token = write_token()
        actions, condition = self._reset(key, expected=expected, expected_try_id=expected_try_id, fields=fields,
                                         token=token)
        actions.append(T.ticket.remove())
        item = self._ti_row(key).get_update_kwargs_from_instance(actions, all_of(condition, T.ticket == held_ticket))
        return TransactWrite({"Update": item}, functools.partial(self._carries, key, token))

    def _reset(self, key: TIKey, *, expected: TaskInstanceState | None, expected_try_id: str | None,
               fields: Mapping[str, Any], token: str) -> tuple[list[Action], Condition]:
        T = self.models.task_instance
        unknown = set(fields) - (_TI_FIELDS - _TI_IDENTITY - {"ticket"})
        if unknown:
            raise ValueError(f"reset_ti: {sorted(unknown)} are not settable TaskInstance fields")
        actions = [T.state.remove(), T.try_id.remove(), T.write_token.set(token), *set_actions(T, fields),
                   *waiting.leave_actions(T)]
        condition = all_of(item_present(T), ti_in_state_or_none(T, expected))
        if expected_try_id is not None:
            condition = all_of(condition, try_matches(T, expected_try_id))
        return actions, condition

    def delete_ti_item(self, key: TIKey, *, held_ticket: str) -> TransactWrite:
        """The instance's deletion as one item of a transaction (``updraft.limits.release`` adds the gives), built
        and not sent, conditional on it carrying ``held_ticket``: a deleted instance's slots go back with it, and
        a deletion repeated after either changes nothing. ``landed``: the item is gone."""
        T = self.models.task_instance
        item = self._ti_row(key).get_delete_kwargs_from_instance(T.ticket == held_ticket)
        return TransactWrite({"Delete": item}, functools.partial(self._gone, key))

    def _gone(self, key: TIKey) -> bool:
        try:
            self.models.task_instance.get(*self._ti_keys(key), consistent_read=True, attributes_to_get=["sk"])
        except self.models.task_instance.DoesNotExist:
            return True
        return False

    def record_try(self, ti: TaskInstance) -> bool:
        """Keep a try as it ended before a clear or a retry supersedes it (Airflow's task instance history).
        Written once per try number: a repeated request does not overwrite the first record."""
        T = self.models.task_instance
        item = T(self.ti_pk(*ti.key), keys.try_sk(ti.task_id, ti.map_index, ti.try_number),
                 **{f: getattr(ti, f) for f in _TRY_FIELDS})
        item.state = str(ti.state) if ti.state else None
        return conditional(lambda: item.save(condition=item_absent(T)))

    def get_tries(self, key: TIKey) -> list[TaskInstance]:
        """The recorded tries of one instance, oldest first."""
        T = self.models.task_instance
        items = self.query_run(T, key.dag_id, key.run_id, keys.try_prefix(key.task_id, key.map_index),
                               shard_of=(key.task_id, key.map_index))
        return [_ti_from_item(i) for i in items]

    def start_ti(self, key: TIKey, *, try_id: str, fields: Mapping[str, Any]) -> TaskInstance | None:
        T = self.models.task_instance
        row = self._ti_row(key)
        token = write_token()
        actions: list[Action] = [T.state.set(str(TaskInstanceState.RUNNING)), T.write_token.set(token)]
        for name, value in fields.items():
            attr = getattr(T, name)
            actions.append(attr.remove() if value is None else attr.set(value))
        condition = all_of(ti_in_states(T, [str(TaskInstanceState.QUEUED)]), try_matches(T, try_id))
        try:
            # ALL_NEW: the row is the item as written. Sent again while a claim's transaction holds the item.
            past_conflicts(lambda: row.update(actions=actions, condition=condition))
        except UpdateError as exc:
            if not condition_failed(exc):
                raise
            # A duplicate dispatch loses here; our own start whose acknowledgement was lost does not: failing it
            # would leave a try that never ran to be failed as a zombie, burning one of its retries.
            if not resent(exc):
                return None
            try:
                mine = T.get(*self._ti_keys(key), consistent_read=True)
            except T.DoesNotExist:
                return None
            return _ti_from_item(mine) if mine.write_token == token else None
        return _ti_from_item(row)

    def set_rendered_fields(self, key: TIKey, *, try_id: str, rendered_fields: Mapping[str, Any]) -> bool:
        """Keep the running try's rendered template fields on its instance (replacing an earlier try's), only
        while that try is the live one: a stale worker's fields are refused like its outcome."""
        T = self.models.task_instance
        condition = all_of(try_matches(T, try_id), ti_in_states(T, _LIVE_STATES))
        action = T.rendered_fields.set(dict(rendered_fields))
        return conditional(lambda: update_quietly(self._ti_row(key), [action], condition))

    def heartbeat(self, key: TIKey, *, try_id: str, lease_expires_at: dt.datetime) -> bool:
        T = self.models.task_instance
        row = self._ti_row(key)
        condition = all_of(try_matches(T, try_id), ti_in_states(T, _LIVE_STATES))
        return conditional(lambda: update_quietly(row, [T.lease_expires_at.set(lease_expires_at)], condition))

    def set_blocked_reason(self, key: TIKey, reason: str | None, *,
                           expected_state: TaskInstanceState = TaskInstanceState.SCHEDULED,
                           priority_weight: int | None = None) -> bool:
        """Why the task instance is not queued yet, kept on its item so "why is my task not running" is one
        read. One conditional write: False when the instance is not (or no longer) in ``expected_state``.
        A scheduled instance given a reason and its ``priority_weight`` enters its run's waiting index in the
        same write (``store.waiting``); a reason removed leaves it."""
        T = self.models.task_instance
        actions: list[Action] = [T.blocked_reason.remove() if reason is None else T.blocked_reason.set(reason)]
        if reason is None:
            actions += waiting.leave_actions(T)
        elif priority_weight is not None and expected_state == TaskInstanceState.SCHEDULED:
            actions += waiting.enter_actions(T, key, priority_weight)
        condition = ti_in_states(T, [str(expected_state)])
        return conditional(lambda: update_quietly(self._ti_row(key), actions, condition))
