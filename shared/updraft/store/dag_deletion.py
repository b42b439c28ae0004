"""Deleting a DAG's items (``DELETE /dags/{dag_id}``): its runs' partitions, then its own partition.

Deletes are unconditional and idempotent (deleting an absent item succeeds), so a retried deletion finishes
what a crashed one started. The DAG row (``META``) goes last: while any of the DAG's items remain, the DAG is
still found, and a retry reaches them. What may be deleted is decided by the caller
(:mod:`updraft.scheduling.commands.dag_deletion`).
"""

from __future__ import annotations

from collections.abc import Sequence

from updraft.store import keys
from updraft.store.base import StoreBase
from updraft.store.models import Item


class DagDeletionStore(StoreBase):
    @staticmethod
    def _delete_all(items: Sequence[Item]) -> int:
        for item in items:
            item.delete()
        return len(items)

    def delete_run_items(self, dag_id: str, run_id: str) -> int:
        """Every item in the run's partition, every shard (task instances, XComs), and its ENDS counters: a query
        per shard and MB, a delete per item."""
        T = self.models.task_instance
        return sum(self._delete_all(list(T.query(pk, consistent_read=True)))
                   for pk in (*self.run_pks(dag_id, run_id, deleted=True), keys.run_ends_pk(dag_id, run_id)))

    def delete_dag_items(self, dag_id: str) -> int:
        """Every item in the DAG's partition (runs, versions), the row (``META``) last."""
        M = self.models.dag_meta
        found = list(M.query(keys.dag_pk(dag_id), consistent_read=True))
        found.sort(key=lambda item: item.sk == keys.META)
        return self._delete_all(found)
