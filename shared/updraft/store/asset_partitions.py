"""Pending partitioned runs: per DAG scheduled on partitioned assets, one item per downstream partition key.

Items (``pk`` / ``sk``)::

    pending partition   ASSET_PARTITION#<dag_id>   KEY#<partition key>   logs, done, version, created_at, claim

listed, while something is pending, under the asset queue's list key (one query per tick finds both kinds).

Airflow keeps an ``asset_partition_dag_run`` row per (DAG, key) until it becomes a run, and a
``partitioned_asset_key_log`` row per event mapped to it. Here the logs are a string set on the key's item, so
recording an event is one idempotent ``ADD`` (a redelivered event adds nothing new) and every write touches one
item. A run is claimed as the asset queue's batches are (:mod:`updraft.store.assets`): one conditional write
(``version`` as read, no claim pending) records the run id and the logs it is made of; the claimer, or whoever
later finds the claim unfinished, creates the run (its id is in the claim: created once) and takes exactly the
claimed logs off the item into its ``done`` set. Events that arrived since stay, for the key's next run, as
Airflow's next ``asset_partition_dag_run`` row; an event delivered again after its run (a Lambda retry) is
refused by ``done``, so it never makes a second run. An item with nothing pending leaves the scheduler's list.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from updraft.store import keys
from updraft.store.asset_items import AssetModels, asset_models
from updraft.store.attributes import parse_ts, ts
from updraft.store.base import StoreBase
from updraft.store.writes import all_of, conditional, item_present, update_quietly


@dataclass(frozen=True)
class PartitionLog:
    """One event mapped to a pending partition: its asset and event, the producer's key, and the producer's
    partition date when the mapper carries it (the identity mapper)."""

    asset_id: int
    event_id: int
    source_key: str
    carried_date: dt.datetime | None = None

    def encode(self) -> str:
        carried = ts(self.carried_date) if self.carried_date is not None else ""
        return f"{self.asset_id}#{self.event_id}#{carried}#{self.source_key}"

    @classmethod
    def decode(cls, text: str) -> PartitionLog:
        asset_id, event_id, carried, source_key = text.split("#", 3)
        return cls(int(asset_id), int(event_id), source_key, parse_ts(carried) if carried else None)

    @property
    def event_ref(self) -> str:
        return f"{self.asset_id}#{self.event_id}"


@dataclass(frozen=True)
class PendingPartition:
    dag_id: str
    partition_key: str
    created_at: dt.datetime
    logs: frozenset[str]
    version: int
    run_id: str | None = None  # a claim not yet finished
    run_after: dt.datetime | None = None
    claimed: frozenset[str] = frozenset()

    def decoded(self, logs: Iterable[str] | None = None) -> list[PartitionLog]:
        return [PartitionLog.decode(text) for text in sorted(self.logs if logs is None else logs)]


class AssetPartitionStore(StoreBase):
    @property
    def _models(self) -> AssetModels:
        return asset_models(self.config)

    def queue_partition(self, dag_id: str, partition_key: str, log: PartitionLog, *, now: dt.datetime) -> bool:
        """Map one event to the DAG's pending run for ``partition_key``; False when a run was already made of it.
        Idempotent: the logs are a set."""
        P = self._models.asset_partition
        row = P(keys.asset_partition_pk(dag_id), keys.partition_sk(partition_key))
        entry = log.encode()
        return conditional(lambda: update_quietly(
            row, [P.dag_id.set(dag_id), P.partition_key.set(partition_key), P.created_at.set(P.created_at | now),
                  P.logs.add({entry}), P.version.add(1), P.list_pk.set(keys.ASSET_QUEUES_LIST_PK),
                  P.list_sk.set(keys.queued_list_sk(dag_id, partition_key))],
            P.done.does_not_exist() | ~P.done.contains(entry)))

    def pending_partitions(self, dag_id: str | None = None, *,
                           listed: list[tuple[str, str]] | None = None) -> list[PendingPartition]:
        """The pending (dag, key) items (of ``dag_id``, else of every DAG: from ``listed``, the asset queue's list
        of keys, when the caller has it), oldest first: Airflow fires the oldest pending partition first."""
        P = self._models.asset_partition
        if dag_id is None:
            found_keys = self._listed_keys(P.list_index, [keys.ASSET_QUEUES_LIST_PK]) if listed is None else listed
            prefix = keys.asset_partition_pk("")
            items = self._batch_get(P, [(pk, sk) for pk, sk in found_keys if pk.startswith(prefix)])
        else:
            items = list(P.query(keys.asset_partition_pk(dag_id), consistent_read=True))
        found = [PendingPartition(i.dag_id, i.partition_key, i.created_at, frozenset(i.logs or ()), int(i.version),
                                  i.run_id, i.run_after, frozenset(i.claimed or ())) for i in items
                 if i.logs or i.run_id is not None]
        return sorted(found, key=lambda p: (p.created_at, p.dag_id, p.partition_key))

    def claim_partition(self, pending: PendingPartition, *, run_id: str, run_after: dt.datetime,
                        logs: Iterable[str]) -> PendingPartition | None:
        """Claim the key's run made of ``logs`` (one conditional write); None when another claim won."""
        P = self._models.asset_partition
        claimed = frozenset(logs)
        row = P(keys.asset_partition_pk(pending.dag_id), keys.partition_sk(pending.partition_key))
        ok = conditional(lambda: update_quietly(
            row, [P.run_id.set(run_id), P.run_after.set(run_after), P.claimed.set(set(claimed))],
            all_of(P.version == pending.version, P.run_id.does_not_exist())))
        if not ok:
            return None
        return PendingPartition(pending.dag_id, pending.partition_key, pending.created_at, pending.logs,
                                pending.version, run_id, run_after, claimed)

    def finish_partition(self, claim: PendingPartition) -> None:
        """Move the claimed logs to ``done`` and end the claim (idempotent); an item with nothing left pending
        leaves the scheduler's list."""
        P = self._models.asset_partition
        row = P(keys.asset_partition_pk(claim.dag_id), keys.partition_sk(claim.partition_key))
        actions = [P.run_id.remove(), P.run_after.remove(), P.claimed.remove(), P.version.add(1)]
        if claim.claimed:
            actions += [P.logs.delete(set(claim.claimed)), P.done.add(set(claim.claimed))]
        if not conditional(lambda: update_quietly(row, actions, all_of(item_present(P), P.run_id == claim.run_id))):
            return  # finished before
        conditional(lambda: update_quietly(row, [P.list_pk.remove(), P.list_sk.remove()],
                                           all_of(P.logs.does_not_exist(), P.run_id.does_not_exist())))
