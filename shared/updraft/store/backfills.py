"""The backfill aggregate: one item per backfill, a marker naming each DAG's active backfill, and the id sequence.

Airflow refuses a second active backfill of a DAG; here that rule is one conditional put of the DAG's marker
(``ACTIVE_BACKFILL#<dag_id>``), written before the backfill item and deleted when the backfill completes. The
markers are also how the scheduler finds active backfills (the list index, one partition). A marker whose
backfill item never got written (the creating call died in between) is dropped after ``ORPHAN_GRACE``, as
Airflow's scheduler drops a backfill that never got its runs. The scheduler's progress (``created``) moves by a
conditional update on its old value, so of two schedulers one advances and the other stops.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence

from pynamodb.attributes import BooleanAttribute, JSONAttribute, NumberAttribute, UnicodeAttribute
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action

from updraft.model.backfills import Backfill, ReprocessBehavior
from updraft.model.records import DagRun
from updraft.store import keys
from updraft.store.attributes import DateTimeAttribute, ts
from updraft.store.base import StoreBase
from updraft.store.config import StoreConfig
from updraft.store.models import Item, ListIndex, bind
from updraft.store.runs import _run_from_item
from updraft.store.writes import all_of, conditional, item_absent, item_present, update_quietly

# A marker this old without its backfill item was left by a creation that died between its two puts.
ORPHAN_GRACE = dt.timedelta(minutes=2)


class BackfillItem(Item):
    backfill_id = NumberAttribute()
    dag_id = UnicodeAttribute()
    from_date = DateTimeAttribute()
    to_date = DateTimeAttribute()
    dag_hash = UnicodeAttribute()
    created_at = DateTimeAttribute()
    updated_at = DateTimeAttribute()
    dag_run_conf = JSONAttribute(null=True)
    is_paused = BooleanAttribute(default=False)
    reprocess_behavior = UnicodeAttribute(default="none")
    max_active_runs = NumberAttribute()
    run_backwards = BooleanAttribute(default=False)
    completed_at = DateTimeAttribute(null=True)
    triggering_user_name = UnicodeAttribute(null=True)
    created = NumberAttribute(default=0)
    skipped = JSONAttribute(null=True)
    list_pk = UnicodeAttribute(null=True)
    list_sk = UnicodeAttribute(null=True)
    list_index: ListIndex[BackfillItem] = ListIndex()


class ActiveBackfillItem(Item):
    dag_id = UnicodeAttribute()
    backfill_id = NumberAttribute()
    created_at = DateTimeAttribute()
    list_pk = UnicodeAttribute(null=True)
    list_sk = UnicodeAttribute(null=True)
    list_index: ListIndex[ActiveBackfillItem] = ListIndex()


class SequenceItem(Item):
    value = NumberAttribute(default=0)


@functools.cache
def _models(config: StoreConfig) -> tuple[type[BackfillItem], type[ActiveBackfillItem], type[SequenceItem]]:
    """The backfill item types bound to ``config``'s table, on the one connection the other models share."""
    return bind(BackfillItem, config), bind(ActiveBackfillItem, config), bind(SequenceItem, config)


# ----------------------------------------------------------------------------------------- named conditions
def backfill_active(B: type[BackfillItem]) -> Condition:
    """The backfill exists and has not completed: a completed (or cancelled) one never changes again."""
    return all_of(item_present(B), B.completed_at.does_not_exist())


def progress_is(B: type[BackfillItem], created: int) -> Condition:
    """Nobody advanced the backfill since it was read: of two schedulers creating its next run, one moves on."""
    return all_of(backfill_active(B), B.created == created)


def marks(A: type[ActiveBackfillItem], backfill_id: int) -> Condition:
    return all_of(item_present(A), A.backfill_id == backfill_id)


def _from_item(item: BackfillItem) -> Backfill:
    return Backfill(
        id=int(item.backfill_id), dag_id=item.dag_id, from_date=item.from_date, to_date=item.to_date,
        dag_hash=item.dag_hash, created_at=item.created_at, updated_at=item.updated_at,
        dag_run_conf=item.dag_run_conf or {}, is_paused=bool(item.is_paused),
        reprocess_behavior=ReprocessBehavior(item.reprocess_behavior), max_active_runs=int(item.max_active_runs),
        run_backwards=bool(item.run_backwards), completed_at=item.completed_at,
        triggering_user_name=item.triggering_user_name, created=int(item.created or 0),
        skipped=dict(item.skipped or {}),
    )


class BackfillStore(StoreBase):
    def next_backfill_id(self) -> int:
        """A new integer id (Airflow's ids are integers): one atomic ADD on the sequence item."""
        _, _, S = _models(self.config)
        row = S(keys.BACKFILL_SEQUENCE_PK, keys.META)
        row.update(actions=[S.value.add(1)])
        return int(row.value)

    def create_backfill(self, backfill: Backfill) -> bool:
        """Mark ``backfill`` as its DAG's active one, then store it; False (nothing written) when the DAG
        already has an active backfill."""
        B, A, _ = _models(self.config)
        marker = A(keys.active_backfill_pk(backfill.dag_id), keys.META, dag_id=backfill.dag_id,
                   backfill_id=backfill.id, created_at=backfill.created_at, list_pk=keys.ACTIVE_BACKFILLS_LIST_PK,
                   list_sk=keys.backfill_list_sk(backfill.id))
        if not conditional(lambda: marker.save(condition=item_absent(A))):
            return False
        item = B(keys.backfill_pk(backfill.id), keys.META, backfill_id=backfill.id, dag_id=backfill.dag_id,
                 from_date=backfill.from_date, to_date=backfill.to_date, dag_hash=backfill.dag_hash,
                 created_at=backfill.created_at, updated_at=backfill.updated_at,
                 dag_run_conf=backfill.dag_run_conf or None, is_paused=backfill.is_paused,
                 reprocess_behavior=str(backfill.reprocess_behavior), max_active_runs=backfill.max_active_runs,
                 run_backwards=backfill.run_backwards, completed_at=backfill.completed_at,
                 triggering_user_name=backfill.triggering_user_name, created=backfill.created,
                 skipped=backfill.skipped or None, list_pk=keys.backfill_list_pk(backfill.dag_id),
                 list_sk=keys.backfill_list_sk(backfill.id))
        return conditional(lambda: item.save(condition=item_absent(B)))

    def get_backfill(self, backfill_id: int) -> Backfill | None:
        B, _, _ = _models(self.config)
        try:
            return _from_item(B.get(keys.backfill_pk(backfill_id), keys.META, consistent_read=True))
        except B.DoesNotExist:
            return None

    def active_backfill_id(self, dag_id: str) -> int | None:
        _, A, _ = _models(self.config)
        try:
            return int(A.get(keys.active_backfill_pk(dag_id), keys.META, consistent_read=True).backfill_id)
        except A.DoesNotExist:
            return None

    def list_backfills(self, dag_id: str) -> list[Backfill]:
        """The DAG's backfills by id, found through the list index and read strongly."""
        B, _, _ = _models(self.config)
        found = self._listed_keys(B.list_index, [keys.backfill_list_pk(dag_id)])
        return sorted((_from_item(i) for i in self._batch_get(B, found)), key=lambda b: b.id)

    def active_backfills(self, now: dt.datetime) -> list[Backfill]:
        """Every DAG's active backfill, through the markers; drops a marker orphaned for ``ORPHAN_GRACE``."""
        B, A, _ = _models(self.config)
        markers = self._batch_get(A, self._listed_keys(A.list_index, [keys.ACTIVE_BACKFILLS_LIST_PK]))
        items = {int(i.backfill_id): i for i in self._batch_get(
            B, [(keys.backfill_pk(int(m.backfill_id)), keys.META) for m in markers])}
        for marker in markers:
            if int(marker.backfill_id) not in items and now - marker.created_at >= ORPHAN_GRACE:
                self.release_active_backfill(marker.dag_id, int(marker.backfill_id))
        return sorted((_from_item(i) for i in items.values()), key=lambda b: b.id)

    def release_active_backfill(self, dag_id: str, backfill_id: int) -> bool:
        """Delete the DAG's marker, only while it still names ``backfill_id``."""
        _, A, _ = _models(self.config)
        marker = A(keys.active_backfill_pk(dag_id), keys.META)
        return conditional(lambda: marker.delete(condition=marks(A, backfill_id)))

    def set_backfill_paused(self, backfill_id: int, paused: bool, *, now: dt.datetime) -> bool:
        """Pause or unpause; False when the backfill does not exist or has completed."""
        B, _, _ = _models(self.config)
        return self._update(backfill_id, [B.is_paused.set(paused), B.updated_at.set(now)], backfill_active(B))

    def advance_backfill(self, backfill_id: int, *, expected_created: int, created: int, now: dt.datetime) -> bool:
        """Record that the plan's entries before ``created`` are runs, only if it still stands at
        ``expected_created`` and is active."""
        B, _, _ = _models(self.config)
        return self._update(backfill_id, [B.created.set(created), B.updated_at.set(now)],
                            progress_is(B, expected_created))

    def complete_backfill(self, backfill_id: int, *, now: dt.datetime, pause: bool = False) -> bool:
        """Set ``completed_at`` (and pause it, for a cancel) unless it is set already; the DAG's marker goes
        either way (idempotent), so a new backfill of the DAG can start."""
        B, _, _ = _models(self.config)
        actions = [B.completed_at.set(now), B.updated_at.set(now)] + ([B.is_paused.set(True)] if pause else [])
        done = self._update(backfill_id, actions, backfill_active(B))
        backfill = self.get_backfill(backfill_id)
        if backfill is not None:
            self.release_active_backfill(backfill.dag_id, backfill_id)
        return done

    def _update(self, backfill_id: int, actions: Sequence[Action], condition: Condition) -> bool:
        B, _, _ = _models(self.config)
        row = B(keys.backfill_pk(backfill_id), keys.META)
        return conditional(lambda: update_quietly(row, actions, condition))

    def runs_dated_between(self, dag_id: str, start: dt.datetime, end: dt.datetime) -> list[DagRun]:
        """The DAG's runs whose logical date is within [start, end], from the runs' date index (strong)."""
        R = self.models.run
        items = R.by_date.query(keys.dag_pk(dag_id), R.run_date_sk.between(ts(start), ts(end) + "~"),
                                consistent_read=True, filter_condition=R.logical_date.exists())
        return [_run_from_item(self, i) for i in items]
