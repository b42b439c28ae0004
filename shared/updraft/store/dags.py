"""The DAG aggregate: each DAG's row (owner file, pause, next run, the due index) and its immutable versions.

Which file owns a dag_id, when a DAG starts paused and what its next run is are decided in
:mod:`updraft.scheduling.commands.dag_registration`; here are only the writes it needs, each with a named condition.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Mapping
from typing import Any

from pynamodb.expressions.condition import Condition
from pynamodb.expressions.operand import Path

from updraft.serialization import canonical_json
from updraft.store import keys
from updraft.store.api import DagMeta
from updraft.store.attributes import ts
from updraft.store.base import StoreBase
from updraft.store.models import DagMetaItem
from updraft.store.writes import RETRIES, all_of, any_of, conditional, item_absent, set_actions, update_quietly
from updraft.timetables.base import DagRunInfo, DataInterval


# ----------------------------------------------------------------------------------------- named conditions
def next_run_is(M: type[DagMetaItem], logical_date: dt.datetime | None) -> Condition:
    """The DAG's next run is still the one the caller read (None: it has none)."""
    if logical_date is None:  # absent, or a NULL written before ``set_actions`` removed None values
        return any_of(M.next_dagrun_logical_date.does_not_exist(), Path(M.next_dagrun_logical_date).is_type("NULL"))
    return M.next_dagrun_logical_date == logical_date


def meta_unchanged(M: type[DagMetaItem], meta: DagMeta) -> Condition:
    """Owner, version, active and paused flags and next run are as read: a concurrent pause, advance or
    takeover makes the writer re-read instead of overwriting it."""
    return all_of(M.relative_fileloc == meta.relative_fileloc, M.dag_hash == meta.dag_hash,
                  M.is_active == meta.is_active, M.is_paused == meta.is_paused,
                  next_run_is(M, meta.next_dagrun_logical_date))


def owned_and_active(M: type[DagMetaItem], relative_path: str) -> Condition:
    return all_of(M.relative_fileloc == relative_path, M.is_active == True)  # noqa: E712


def active_and_unpaused(M: type[DagMetaItem]) -> Condition:
    return all_of(M.is_active == True, M.is_paused == False)  # noqa: E712


def flags_are(M: type[DagMetaItem], *, active: bool, paused: bool) -> Condition:
    return all_of(M.is_active == active, M.is_paused == paused)


# ----------------------------------------------------------------------------------------------------- helpers
def next_run_fields(info: DagRunInfo | None) -> dict[str, dt.datetime | None]:
    """A DagRunInfo (or None: no further run) as the row's next-run fields."""
    return {
        "next_dagrun_logical_date": info.logical_date if info else None,
        "next_dagrun_data_interval_start": info.data_interval.start if info else None,
        "next_dagrun_data_interval_end": info.data_interval.end if info else None,
        "next_dagrun_run_after": info.run_after if info else None,
    }


def _meta_from_item(item: DagMetaItem) -> DagMeta:
    return DagMeta(
        dag_id=item.dag_id,
        relative_fileloc=item.relative_fileloc,
        dag_hash=item.dag_hash,
        file_version=item.file_version,
        is_paused=bool(item.is_paused),
        is_active=bool(item.is_active),
        max_active_runs=int(item.max_active_runs),
        max_active_tasks=int(item.max_active_tasks),
        timetable_summary=item.timetable_summary,
        tags=list(item.tags or []),
        owners=item.owners,
        next_dagrun_logical_date=item.next_dagrun_logical_date,
        next_dagrun_data_interval_start=item.next_dagrun_data_interval_start,
        next_dagrun_data_interval_end=item.next_dagrun_data_interval_end,
        next_dagrun_run_after=item.next_dagrun_run_after,
        last_automated_data_interval_start=item.last_automated_data_interval_start,
        last_automated_data_interval_end=item.last_automated_data_interval_end,
        schedule_key=item.schedule_key,
        catchup=bool(item.catchup),
        updated_at=item.updated_at,
        timetable_horizon=item.timetable_horizon,
    )


class DagStore(StoreBase):
    def _meta_item(self, dag_id: str) -> DagMetaItem | None:
        M = self.models.dag_meta
        try:
            return M.get(keys.dag_pk(dag_id), keys.META, consistent_read=True)
        except M.DoesNotExist:
            return None

    def _due_values(self, dag_id: str, *, active: bool, paused: bool,
                    run_after: dt.datetime | None) -> dict[str, str | None]:
        """The due-DAGs index entry, kept in step with the fields that define it (sparse: None = not due)."""
        if active and not paused and run_after is not None:
            return {"due_pk": keys.due_pk(dag_id, self.config.index_shards), "due_sk": ts(run_after)}
        return {"due_pk": None, "due_sk": None}

    # ----------------------------------------------------------------------------------------------- reads
    def get_dag_meta(self, dag_id: str) -> DagMeta | None:
        item = self._meta_item(dag_id)
        return None if item is None else _meta_from_item(item)

    def get_dag_metas(self, dag_ids: Iterable[str]) -> dict[str, DagMeta]:
        M = self.models.dag_meta
        found = self._batch_get(M, sorted({(keys.dag_pk(d), keys.META) for d in dag_ids}))
        return {meta.dag_id: meta for meta in map(_meta_from_item, found)}

    def list_dags(self, *, include_inactive: bool = False) -> list[DagMeta]:
        M = self.models.dag_meta
        found = self._listed_keys(M.list_index, (keys.dags_list_shard_pk(i) for i in self._shards()))
        metas = [_meta_from_item(i) for i in self._batch_get(M, found)]
        return sorted((m for m in metas if include_inactive or m.is_active), key=lambda m: m.dag_id)

    def due_dags(self, now: dt.datetime) -> list[DagMeta]:
        M = self.models.dag_meta
        found = []
        for i in self._shards():
            for item in M.due_index.query(keys.due_shard_pk(i), M.due_sk <= ts(now)):
                if item.is_active and not item.is_paused:  # the index lags: skip what it already shows stale
                    found.append(_meta_from_item(item))
        return sorted(found, key=lambda m: (m.next_dagrun_run_after, m.dag_id))

    # ---------------------------------------------------------------------------------------------- writes
    def put_new_dag(self, dag_id: str, values: Mapping[str, Any]) -> bool:
        M = self.models.dag_meta
        row = {**values, **self._due_values(dag_id, active=bool(values.get("is_active", True)),
                                            paused=bool(values.get("is_paused", True)),
                                            run_after=values.get("next_dagrun_run_after")),
               "dag_id": dag_id, "list_pk": keys.dags_list_pk(dag_id, self.config.index_shards), "list_sk": dag_id}
        item = M(keys.dag_pk(dag_id), keys.META, **{k: v for k, v in row.items() if v is not None})
        return conditional(lambda: item.save(condition=item_absent(M)))

    def update_dag_meta(self, dag_id: str, values: Mapping[str, Any], *, expected: DagMeta) -> bool:
        M = self.models.dag_meta
        # The due entry follows the row as it will be: these fields from ``values`` when set, else as read.
        after = {"is_active": expected.is_active, "is_paused": expected.is_paused,
                 "next_dagrun_run_after": expected.next_dagrun_run_after, **values}
        row_values = {**values, **self._due_values(dag_id, active=bool(after["is_active"]),
                                                   paused=bool(after["is_paused"]),
                                                   run_after=after["next_dagrun_run_after"])}
        row = M(keys.dag_pk(dag_id), keys.META)
        return conditional(lambda: update_quietly(row, set_actions(M, row_values), meta_unchanged(M, expected)))

    def deactivate_dag(self, dag_id: str, *, expected_owner: str) -> bool:
        M = self.models.dag_meta
        row = M(keys.dag_pk(dag_id), keys.META)
        actions = [M.is_active.set(False), M.due_pk.remove(), M.due_sk.remove()]
        return conditional(lambda: update_quietly(row, actions, owned_and_active(M, expected_owner)))

    def advance_next_dagrun(self, dag_id: str, *, expected_logical_date: dt.datetime | None,
                            next_info: DagRunInfo | None, last_automated: DataInterval | None) -> bool:
        M = self.models.dag_meta
        values = next_run_fields(next_info)
        if last_automated is not None:
            values.update(last_automated_data_interval_start=last_automated.start,
                          last_automated_data_interval_end=last_automated.end)
        expect = next_run_is(M, expected_logical_date)
        row = M(keys.dag_pk(dag_id), keys.META)
        run_after = next_info.run_after if next_info is not None else None
        # One write on the hot path: a DAG found through due_dags is almost always active and unpaused.
        fast = {**values, **self._due_values(dag_id, active=True, paused=False, run_after=run_after)}
        if conditional(lambda: update_quietly(row, set_actions(M, fast), all_of(expect, active_and_unpaused(M)))):
            return True
        for _ in range(RETRIES):
            meta = self._meta_item(dag_id)
            if meta is None or meta.next_dagrun_logical_date != expected_logical_date:
                return False  # another scheduler advanced it (or the DAG is gone)
            active, paused = bool(meta.is_active), bool(meta.is_paused)
            slow = {**values, **self._due_values(dag_id, active=active, paused=paused, run_after=run_after)}
            condition = all_of(expect, flags_are(M, active=active, paused=paused))
            if conditional(functools.partial(update_quietly, row, set_actions(M, slow), condition)):
                return True
        return False

    # -------------------------------------------------------------------------------------------- versions
    def put_version(self, dag_id: str, digest: str, document: dict[str, Any], now: dt.datetime) -> None:
        V = self.models.dag_version
        raw = canonical_json(document)
        data, s3_key = self.blobs.pack(raw, f"{keys.blob_path('dag-versions', dag_id, digest)}.json.gz")
        item = V(keys.dag_pk(dag_id), keys.version_sk(digest), dag_id=dag_id, dag_hash=digest, data=data,
                 s3_key=s3_key, size=len(raw), created_at=now)
        # Versions are immutable and keyed by content: an existing one is already right.
        conditional(lambda: item.save(condition=item_absent(V)))


