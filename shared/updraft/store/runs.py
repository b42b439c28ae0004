"""The run aggregate: one item per DAG run, in the DAG's item collection, in the active index while going."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable
from typing import Any, cast

from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action

from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import FINISHED_RUN_STATES, UNFINISHED_RUN_STATES, DagRunState
from updraft.store import keys, run_shards
from updraft.store.api import DagMeta, RunEnds, RunRead
from updraft.store.attributes import ts
from updraft.store.base import StoreBase
from updraft.store.dags import _meta_from_item
from updraft.store.models import RunItem
from updraft.store.task_instances import _ti_from_item, run_ends
from updraft.store.writes import (
    TransactWrite,
    acknowledged,
    all_of,
    conditional,
    item_absent,
    item_present,
    update_quietly,
    write_reporting,
    write_token,
)

_BATCH_KEYS = 100  # DynamoDB's most keys per BatchGetItem


# ----------------------------------------------------------------------------------------- named conditions
def run_absent(R: type[RunItem]) -> Condition:
    """No run has this (dag_id, run_id) yet: of two schedulers creating it, one wins."""
    return item_absent(R)


def run_in_states(R: type[RunItem], states: Iterable[str]) -> Condition:
    return all_of(item_present(R), R.state.is_in(*states))


def _run_from_item(store: StoreBase, item: RunItem) -> DagRun:
    """The run an item holds; ``store`` keeps its shard count (every run read is one way a process learns it)."""
    shards = int(item.ti_shards or 1)
    store.remember_run_shards(item.dag_id, item.run_id, shards)
    return DagRun(
        dag_id=item.dag_id, run_id=item.run_id, run_type=item.run_type, dag_hash=item.dag_hash,
        state=DagRunState(item.state), logical_date=item.logical_date,
        data_interval_start=item.data_interval_start, data_interval_end=item.data_interval_end,
        run_after=item.run_after, conf=item.conf or {}, queued_at=item.queued_at,
        start_date=item.start_date, end_date=item.end_date, note=item.note,
        partition_key=item.partition_key, partition_date=item.partition_date, triggered_by=item.triggered_by,
        triggering_user_name=item.triggering_user_name, ticket=item.ticket, ti_shards=shards,
    )


class RunStore(StoreBase):
    def _run_carries(self, dag_id: str, run_id: str, token: str) -> bool:
        """The run's last state write is the one with ``token``: ours landed, its acknowledgement was lost."""
        item = self._run_attribute(dag_id, run_id, "write_token")
        return item is not None and item.write_token == token

    def create_run(self, run: DagRun) -> bool:
        """Create the run unless it exists. The store chooses its shard count and sets ``run.ti_shards``."""
        R = self.models.run
        item = self._new_run(run)
        created = acknowledged(lambda: item.save(condition=run_absent(R)),
                               lambda: self._run_carries(run.dag_id, run.run_id, item.write_token))
        if created:
            self.remember_run_shards(run.dag_id, run.run_id, run.ti_shards)
        return created

    def create_run_item(self, run: DagRun, *, ticket: str) -> TransactWrite:
        """``create_run``'s write as one item of a transaction (``updraft.limits.acquire`` adds the take of its
        run limit), built and not sent, the run created carrying ``ticket``: a backfill's run holds its slot from
        its creation. ``landed`` reads the run's write token. Sets ``run.ti_shards`` as ``create_run`` does."""
        R = self.models.run
        item = self._new_run(run)
        item.ticket = ticket
        kwargs = item.get_save_kwargs_from_instance(condition=run_absent(R))
        return TransactWrite({"Put": kwargs}, lambda: self._run_carries(run.dag_id, run.run_id, item.write_token))

    def _new_run(self, run: DagRun) -> RunItem:
        R = self.models.run
        dag = self.get_serialized_dag(run.dag_id, run.dag_hash)
        run.ti_shards = 1 if dag is None else run_shards.shards_for(dag)
        sort_date = run.logical_date or run.run_after or run.queued_at or dt.datetime.now(dt.UTC)
        item = R(keys.dag_pk(run.dag_id), keys.run_sk(run.run_id), dag_id=run.dag_id, run_id=run.run_id,
                 run_type=str(run.run_type), dag_hash=run.dag_hash, state=str(run.state),
                 logical_date=run.logical_date, data_interval_start=run.data_interval_start,
                 data_interval_end=run.data_interval_end, run_after=run.run_after, conf=run.conf or None,
                 queued_at=run.queued_at, start_date=run.start_date, end_date=run.end_date, note=run.note,
                 partition_key=run.partition_key, partition_date=run.partition_date,
                 triggered_by=run.triggered_by, triggering_user_name=run.triggering_user_name,
                 run_date_sk=keys.run_date_sk(sort_date, run.run_id), write_token=write_token(),
                 ti_shards=run.ti_shards)
        if run.state in UNFINISHED_RUN_STATES:
            item.active_pk = keys.active_pk(run.dag_id, run.run_id, self.config.index_shards)
            item.active_sk = keys.active_sk(sort_date, run.dag_id, run.run_id)
        return item

    def get_run(self, dag_id: str, run_id: str) -> DagRun | None:
        R = self.models.run
        try:
            return _run_from_item(self, R.get(keys.dag_pk(dag_id), keys.run_sk(run_id), consistent_read=True))
        except R.DoesNotExist:
            return None

    def get_run_and_dag_meta(self, dag_id: str, run_id: str) -> tuple[DagRun | None, DagMeta | None]:
        """One BatchGetItem instead of two GetItems: the mini scheduler reads both for every task that ends."""
        run, meta, _, _ = self.get_run_meta_and_tis(dag_id, run_id, (), ends=False)
        return run, meta

    def get_run_meta_and_tis(self, dag_id: str, run_id: str, ti_keys: Iterable[TIKey], *, ends: bool = True
                             ) -> tuple[DagRun | None, DagMeta | None, dict[TIKey, TaskInstance], RunEnds]:
        """The run, its DAG's row, the named task instances (those that have an item) and the run's ENDS item
        (``ends``), strongly read, in one BatchGetItem (``read_run``)."""
        read = self.read_run(dag_id, run_id, ti_keys, ends=ends)
        return read.run, read.meta, read.tis, read.ends

    def read_run(self, dag_id: str, run_id: str, ti_keys: Iterable[TIKey], *, ends: bool = True,
                 counters: Iterable[tuple[str, int]] = ()) -> RunRead:
        """The run, its DAG's row, the named task instances (those that have an item), the run's ENDS item
        (``ends``) and the named limits' counter items (``counters``: limit id, shard; those that exist), strongly
        read, in one BatchGetItem (up to ~95 instances; more take one more per 100): a batch may name items of any
        partition, so the mini scheduler reads what it decides from in one round trip."""
        R, M, T = self.models.run, self.models.dag_meta, self.models.task_instance
        wanted: list[dict[str, dict[str, str]]] = [
            {R.pk.attr_name: {"S": keys.dag_pk(dag_id)}, R.sk.attr_name: {"S": sk}}
            for sk in (keys.run_sk(run_id), keys.META)]
        wanted += [{T.pk.attr_name: {"S": self.ti_pk(*k)},
                    T.sk.attr_name: {"S": keys.ti_sk(k.task_id, k.map_index)}} for k in dict.fromkeys(ti_keys)]
        if ends:
            wanted.append({T.pk.attr_name: {"S": keys.run_ends_pk(dag_id, run_id)},
                           T.sk.attr_name: {"S": keys.RUN_ENDS_SK}})
        counter_of = {keys.limit_shard_pk(*shard): shard for shard in dict.fromkeys(counters)}
        wanted += [keys.counter_key(*shard) for shard in counter_of.values()]
        read = RunRead()
        dag_pk = keys.dag_pk(dag_id)
        retries = 0  # batches in a row that DynamoDB left keys of (throttling)
        while wanted:
            if retries:  # asked again after a backoff, as AWS advises; a batch of new keys goes at once
                time.sleep(min(0.05 * 2 ** retries, 2.0))
            batch, wanted = wanted[:_BATCH_KEYS], wanted[_BATCH_KEYS:]
            data = R._get_connection().batch_get_item(cast(Any, batch), consistent_read=True)
            for raw in data.get("Responses", {}).get(R.Meta.table_name, []):
                sk = raw[R.sk.attr_name]["S"]
                if sk == keys.RUN_ENDS_SK:
                    read.ends = run_ends(raw)
                elif sk == keys.COUNTER_SK:
                    read.counters[counter_of[raw[R.pk.attr_name]["S"]]] = raw
                elif raw[R.pk.attr_name]["S"] != dag_pk:
                    ti = _ti_from_item(T.from_raw_data(raw))
                    read.tis[ti.key] = ti
                elif sk == keys.META:
                    read.meta = _meta_from_item(M.from_raw_data(raw))
                else:
                    read.run = _run_from_item(self, R.from_raw_data(raw))
            unprocessed = data.get("UnprocessedKeys", {}).get(R.Meta.table_name, {}).get("Keys", [])
            retries = retries + 1 if unprocessed else 0
            wanted = unprocessed + wanted
        return read

    def list_runs(self, dag_id: str, *, limit: int | None = None) -> list[DagRun]:
        R = self.models.run
        items = R.by_date.query(keys.dag_pk(dag_id), scan_index_forward=False, consistent_read=True, limit=limit)
        return [_run_from_item(self, i) for i in items]

    def previous_run(self, dag_id: str, logical_date: dt.datetime, *, scheduled_only: bool = False) -> DagRun | None:
        R = self.models.run
        condition = R.logical_date.exists()
        if scheduled_only:
            condition &= R.run_type != "manual"
        items = R.by_date.query(keys.dag_pk(dag_id), R.run_date_sk < ts(logical_date), scan_index_forward=False,
                                consistent_read=True, filter_condition=condition, limit=1)
        return next((_run_from_item(self, i) for i in items), None)

    def active_runs(self) -> list[DagRun]:
        R = self.models.run
        runs = []
        for i in self._shards():
            runs += [_run_from_item(self, item) for item in R.active_index.query(keys.active_shard_pk(i))]
        return sorted((r for r in runs if r.state in UNFINISHED_RUN_STATES),
                      key=lambda r: (r.logical_date or r.run_after or r.queued_at or dt.datetime.min.replace(
                          tzinfo=dt.UTC), r.dag_id, r.run_id))

    def set_run_state(self, dag_id: str, run_id: str, *, expected: Iterable[DagRunState], state: DagRunState,
                      now: dt.datetime) -> bool:
        R = self.models.run
        expected_states = [str(s) for s in expected]
        if not expected_states:
            return False
        token = write_token()
        actions = self._state_actions(dag_id, run_id, state, now, token)
        row = R(keys.dag_pk(dag_id), keys.run_sk(run_id))
        return acknowledged(lambda: update_quietly(row, actions, run_in_states(R, expected_states)),
                            lambda: self._run_carries(dag_id, run_id, token))

    def run_state_item(self, dag_id: str, run_id: str, *, expected: Iterable[DagRunState], state: DagRunState,
                       now: dt.datetime, ticket: str | None, held_ticket: str | None) -> TransactWrite:
        """``set_run_state``'s write as one item of a transaction (``updraft.limits`` adds its counters), built
        and not sent: the same conditions plus the run carrying ``held_ticket`` (None: none), and leaving it
        carrying ``ticket`` (None: removed), so a run's start takes, and its end gives back, its run limit's slot
        in the same transaction. ``landed`` reads the run's write token."""
        R = self.models.run
        token = write_token()
        actions = self._state_actions(dag_id, run_id, state, now, token)
        actions.append(R.ticket.remove() if ticket is None else R.ticket.set(ticket))
        condition = all_of(run_in_states(R, [str(s) for s in expected]),
                           R.ticket.does_not_exist() if held_ticket is None else R.ticket == held_ticket)
        kwargs = R(keys.dag_pk(dag_id), keys.run_sk(run_id)).get_update_kwargs_from_instance(actions, condition)
        return TransactWrite({"Update": kwargs}, lambda: self._run_carries(dag_id, run_id, token))

    def delete_run_item(self, dag_id: str, run_id: str, *, expected: Iterable[DagRunState],
                        held_ticket: str) -> TransactWrite:
        """``delete_run``'s write as one item of a transaction (``updraft.limits.release`` adds the gives),
        conditional on the run carrying ``held_ticket`` as well. ``landed``: the run is gone."""
        R = self.models.run
        condition = all_of(run_in_states(R, [str(s) for s in expected]), R.ticket == held_ticket)
        kwargs = R(keys.dag_pk(dag_id), keys.run_sk(run_id)).get_delete_kwargs_from_instance(condition)
        return TransactWrite({"Delete": kwargs}, lambda: self.get_run(dag_id, run_id) is None)

    def _state_actions(self, dag_id: str, run_id: str, state: DagRunState, now: dt.datetime,
                       token: str) -> list[Action]:
        R = self.models.run
        state = DagRunState(state)
        actions: list[Action] = [R.state.set(str(state)), R.write_token.set(token)]
        if state in FINISHED_RUN_STATES:
            actions += [R.end_date.set(now), R.active_pk.remove(), R.active_sk.remove()]
        else:
            # Back in (or still in) the active set; a cleared run re-enters the index at ``now``.
            actions += [R.active_pk.set(R.active_pk | keys.active_pk(dag_id, run_id, self.config.index_shards)),
                        R.active_sk.set(R.active_sk | keys.active_sk(now, dag_id, run_id)),
                        R.end_date.remove()]
            if state == DagRunState.QUEUED:
                actions += [R.queued_at.set(now), R.start_date.remove()]
            else:
                actions.append(R.start_date.set(R.start_date | now))
        return actions

    def delete_run(self, dag_id: str, run_id: str, *, expected: Iterable[DagRunState]) -> bool:
        """Delete the run's item, only while it is in one of ``expected`` (Airflow deletes a queued or finished
        run, never a running one); its partition goes with ``delete_run_partition``."""
        R = self.models.run
        expected_states = [str(s) for s in expected]
        row = R(keys.dag_pk(dag_id), keys.run_sk(run_id))
        return conditional(lambda: row.delete(run_in_states(R, expected_states)))

    def delete_run_partition(self, dag_id: str, run_id: str) -> int:
        """Delete every item of a run's partition, every shard (task instances, recorded tries, XComs and the S3
        values of large XComs); returns how many items went. Safe to repeat."""
        T, X = self.models.task_instance, self.models.xcom
        count = 0
        for model, prefix in ((T, keys.TI_PREFIX), (T, keys.TRY_PREFIX), (T, keys.CALLBACK_PREFIX),
                              (X, keys.XCOM_PREFIX)):
            with model.batch_write() as batch:
                for item in self.query_run(model, dag_id, run_id, prefix, deleted=True):
                    for s3_key in (getattr(item, "s3_key", None), getattr(item, "shown_s3_key", None)):
                        if s3_key:
                            self.blobs.delete(s3_key)
                    batch.delete(item)
                    count += 1
        return count

    def claim_callback(self, dag_id: str, run_id: str, request_id: str) -> bool:
        """The run's callback fence: True for the first claim of ``request_id``, False for any later one (an
        at-least-once delivery runs its callbacks once). A conditional put of the request's own item in the run's
        partition (deleted with it); a resent put refused by its own landed write (its token) counts as ours."""
        T = self.models.task_instance
        token = write_token()
        item = T(keys.run_pk(dag_id, run_id), keys.callback_sk(request_id), dag_id=dag_id, run_id=run_id,
                 task_id="", write_token=token)
        written = write_reporting(item, condition=item_absent(T))
        return written.landed or (written.resent and (written.item or {}).get("write_token", {}).get("S") == token)

    def set_run_note(self, dag_id: str, run_id: str, note: str | None) -> bool:
        """Set (None: remove) a run's note, a user's words on it; False if the run does not exist."""
        R = self.models.run
        action = R.note.remove() if note is None else R.note.set(note)
        row = R(keys.dag_pk(dag_id), keys.run_sk(run_id))
        return conditional(lambda: update_quietly(row, [action], item_present(R)))
