"""``DynamoStore``: the :class:`~updraft.store.api.Store` contract on one DynamoDB table, through pynamodb.

Every rule is one conditional write, so its correctness follows from DynamoDB's single-item atomicity and
holds with any number of concurrent callers. A condition that fails is an expected outcome (someone else got
there first) and comes back as ``False``, never as pynamodb's ``PutError``/``UpdateError``/``DeleteError``;
only real failures (throttling past the retries, a missing table) still raise. Index reads only *find*
candidates; anything a caller decides on is re-read strongly or guarded by a condition. The access patterns
and their costs are listed in :mod:`updraft.store`.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import gzip
import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pynamodb.constants import NONE
from pynamodb.exceptions import DeleteError, PutError, UpdateError

from updraft.model.limits import DEFAULT_POOL, DEFAULT_POOL_SLOTS, dag_runs_limit, pool_limit, pool_of, run_tasks_limit
from updraft.model.parse_results import ImportErrorRecord, ParsedFile, dag_id_of
from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import FINISHED_RUN_STATES, DagRunState, TaskInstanceState
from updraft.scheduling.run_creation import next_run_info
from updraft.serialization import canonical_json, dag_hash, deserialize_dag
from updraft.store import keys
from updraft.store.api import DagMeta, LimitState, ParseOutcome, Pool
from updraft.store.config import StoreConfig
from updraft.store.errors import DefaultPoolCannotBeDeleted, StoreError, ValueTooLarge
from updraft.store.models import build_models, parse_ts, ts
from updraft.store.next_run import schedule_key
from updraft.timetables.base import DataInterval

_CONDITION_FAILED = "ConditionalCheckFailedException"
_ACTIVE_RUN_STATES = frozenset({DagRunState.QUEUED, DagRunState.RUNNING})
# Optimistic loops re-read and retry when a concurrent writer changed the item; a handful is plenty because
# each retry means someone else made progress.
_RETRIES = 8
_TI_FIELDS = {f.name for f in dataclasses.fields(TaskInstance)}
_TI_IDENTITY = {"dag_id", "run_id", "task_id", "map_index", "state"}
# Longer than a parser Lambda can live (15 minutes): a save in progress is never mistaken for a stale one.
_STALE_OWNER_AFTER = dt.timedelta(minutes=20)
_MAX_STACKTRACE = 16_000
_MAX_IMPORT_ERRORS = 100


def _condition_failed(exc: Exception) -> bool:
    return getattr(exc, "cause_response_code", None) == _CONDITION_FAILED


def _conditional(write: Any) -> bool:
    """Run one conditional write; a failed condition is a lost race, reported as False."""
    try:
        write()
    except (PutError, UpdateError, DeleteError) as exc:
        if _condition_failed(exc):
            return False
        raise
    return True


def _update(row: Any, actions: list[Any], condition: Any) -> None:
    """A conditional update that returns nothing.

    ``Model.update`` asks for ALL_NEW so it can refresh the object; on a limit item that returns the whole holders
    map with every claim (quadratic bytes as a pool fills) and on every write it is traffic we never read.
    """
    hash_key, range_key = row._get_hash_range_key_serialized_values()
    row._get_connection().update_item(hash_key, range_key=range_key, actions=actions, condition=condition,
                                      return_values=NONE)


def _gzip(data: bytes) -> bytes:
    # mtime=0: the same value always compresses to the same bytes, so rewrites are byte-identical.
    return gzip.compress(data, compresslevel=6, mtime=0)


class DynamoStore:
    """The store on DynamoDB. Thread-safe: it keeps only caches of immutable facts (versions, limit items
    known to exist), so one instance serves every thread of a process."""

    def __init__(self, config: StoreConfig, s3_client: Any = None) -> None:
        self.config = config
        self.models = build_models(config)
        self._s3 = s3_client
        self._lock = threading.Lock()
        self._limits_known: set[str] = set()
        self._versions: collections.OrderedDict[tuple[str, str], Any] = collections.OrderedDict()

    # ================================================================================================ helpers
    def _shards(self) -> range:
        return range(self.config.index_shards)

    def _put_blob(self, key: str, body: bytes) -> str:
        if self._s3 is None or not self.config.s3_bucket:
            raise ValueTooLarge(
                f"{key}: {len(body)} compressed bytes exceed large_item_bytes={self.config.large_item_bytes} "
                "and the store has no S3 bucket/client for large values")
        full = self.config.s3_prefix + key
        self._s3.put_object(Bucket=self.config.s3_bucket, Key=full, Body=body, ContentEncoding="gzip",
                            ContentType="application/json")
        return full

    def _get_blob(self, key: str) -> bytes:
        if self._s3 is None or not self.config.s3_bucket:
            raise StoreError(f"{key} is stored in S3 but the store has no S3 bucket/client")
        return self._s3.get_object(Bucket=self.config.s3_bucket, Key=key)["Body"].read()

    def _pack(self, value_json: bytes, blob_key: str) -> tuple[bytes | None, str | None]:
        """(inline bytes, None) or (None, S3 key) for a JSON value."""
        packed = _gzip(value_json)
        if len(packed) > self.config.large_item_bytes:
            return None, self._put_blob(blob_key, packed)
        return packed, None

    def _unpack(self, data: bytes | None, s3_key: str | None) -> Any:
        packed = data if s3_key is None else self._get_blob(s3_key)
        return json.loads(gzip.decompress(packed))

    # ===================================================================================== DAGs and files
    def _meta_from_item(self, item: Any) -> DagMeta:
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
        )

    def _meta_item(self, dag_id: str) -> Any:
        M = self.models.dag_meta
        try:
            return M.get(keys.dag_pk(dag_id), keys.META, consistent_read=True)
        except M.DoesNotExist:
            return None

    def _due_values(self, dag_id: str, *, active: bool, paused: bool,
                    run_after: dt.datetime | None) -> dict[str, Any]:
        """The due-DAGs index entry, kept in step with the fields that define it (sparse: None = not due)."""
        if active and not paused and run_after is not None:
            return {"due_pk": keys.due_pk(dag_id, self.config.index_shards), "due_sk": ts(run_after)}
        return {"due_pk": None, "due_sk": None}

    @staticmethod
    def _next_values(info: Any) -> dict[str, Any]:
        return {
            "next_dagrun_logical_date": info.logical_date if info else None,
            "next_dagrun_data_interval_start": info.data_interval.start if info else None,
            "next_dagrun_data_interval_end": info.data_interval.end if info else None,
            "next_dagrun_run_after": info.run_after if info else None,
        }

    @staticmethod
    def _actions(model: Any, values: Mapping[str, Any]) -> list:
        """SET each attribute, REMOVE those whose value is None (absent, so sparse indexes drop the item)."""
        return [getattr(model, name).set(value) for name, value in values.items()]

    @staticmethod
    def _expect_next(M: Any, logical_date: dt.datetime | None) -> Any:
        if logical_date is None:
            return M.next_dagrun_logical_date.does_not_exist()
        return M.next_dagrun_logical_date == logical_date

    def _file_item(self, relative_path: str) -> Any:
        F = self.models.file
        try:
            return F.get(keys.file_pk(relative_path), keys.META, consistent_read=True)
        except F.DoesNotExist:
            return None

    def _owner_still_defines(self, relative_path: str, dag_id: str) -> bool:
        """Whether the file that owns a DAG row still has it: a crash or a lost S3 removal event can leave
        a row pointing at a file that no longer defines it, and that must not block the DAG forever."""
        item = self._file_item(relative_path)
        return item is not None and dag_id in (item.dag_ids or [])

    def _put_version(self, dag_id: str, digest: str, document: dict[str, Any], now: dt.datetime) -> None:
        V = self.models.dag_version
        raw = canonical_json(document)
        data, s3_key = self._pack(raw, f"dag-versions/{dag_id}/{digest}.json.gz")
        item = V(keys.dag_pk(dag_id), keys.version_sk(digest), dag_id=dag_id, dag_hash=digest, data=data,
                 s3_key=s3_key, size=len(raw), created_at=now)
        # Versions are immutable and keyed by content: an existing one is already right.
        _conditional(lambda: item.save(condition=V.pk.does_not_exist()))

    def save_parsed_file(self, parsed: Any, *, now: dt.datetime) -> ParseOutcome:
        if isinstance(parsed, dict):
            parsed = ParsedFile.from_dict(parsed)
        if now.tzinfo is None:
            now = now.replace(tzinfo=dt.UTC)
        path = parsed.relative_path
        outcome = ParseOutcome()
        errors: list[dict[str, Any]] = [e.to_dict() for e in parsed.import_errors]
        previous = self._file_item(path)
        owned: list[str] = []
        for document in parsed.dags:
            dag_id = dag_id_of(document)
            result, detail = self._save_dag(document, dag_id, parsed, now)
            if result == "duplicate":
                message = (f"AirflowDagDuplicatedIdException: Ignoring DAG {dag_id} from {path} "
                           f"- also found in {detail}")
                errors.append(ImportErrorRecord(filename=path, lineno=None, message=message, stacktrace=message,
                                                dag_id=dag_id).to_dict())
                outcome.duplicates.append(dag_id)
                continue
            owned.append(dag_id)
            (outcome.stored if result == "stored" else outcome.unchanged).append(dag_id)
            if detail:
                errors.append(ImportErrorRecord(filename=path, lineno=None, message=detail, stacktrace=detail,
                                                dag_id=dag_id).to_dict())
        for dag_id in sorted(set(previous.dag_ids or []) - set(owned) if previous else ()):
            if self._deactivate(dag_id, path):
                outcome.deactivated.append(dag_id)
        self._put_file(parsed, owned, errors, now, previous)
        outcome.import_errors = errors
        return outcome

    def _save_dag(self, document: dict[str, Any], dag_id: str, parsed: ParsedFile,
                  now: dt.datetime) -> tuple[str, str | None]:
        """("stored" | "unchanged", schedule error or None) or ("duplicate", the owning file)."""
        M = self.models.dag_meta
        path = parsed.relative_path
        digest = dag_hash(document)
        body = document.get("dag", {})
        sdag, sdag_error = None, None
        try:
            sdag = deserialize_dag(document)
        except Exception as exc:  # a custom timetable this process has no plugin for, a newer schema...
            sdag_error = f"{type(exc).__name__}: {exc}"
        skey = schedule_key(document, sdag) if sdag is not None else None
        owners = sorted({t.get("owner", "airflow") for t in body.get("tasks", [])}) or ["airflow"]
        values: dict[str, Any] = {
            "dag_id": dag_id,
            "dag_hash": digest,
            "relative_fileloc": path,
            "is_active": True,
            "file_version": parsed.file_version,
            "max_active_runs": int(body.get("max_active_runs", 16)),
            "max_active_tasks": int(body.get("max_active_tasks", 16)),
            "timetable_summary": body.get("timetable_summary"),
            "tags": sorted(body.get("tags") or []),
            "owners": ", ".join(owners),
            "catchup": bool(body.get("catchup", False)),
            "updated_at": now,
        }
        version_written = False
        for _ in range(_RETRIES):
            meta = self._meta_item(dag_id)
            if meta is not None and meta.relative_fileloc != path and meta.is_active:
                # The owner's file record is written after its DAG rows, so a fresh row is trusted as is:
                # only a row older than any parse could take is checked against its file for staleness.
                fresh = meta.updated_at is not None and now - meta.updated_at < _STALE_OWNER_AFTER
                if fresh or self._owner_still_defines(meta.relative_fileloc, dag_id):
                    return "duplicate", meta.relative_fileloc
            if (meta is not None and meta.relative_fileloc == path and meta.is_active and meta.dag_hash == digest
                    and meta.schedule_key == skey):
                return "unchanged", sdag_error
            if not version_written and (meta is None or meta.dag_hash != digest):
                self._put_version(dag_id, digest, document, now)
                version_written = True
            error = sdag_error
            recompute = sdag is not None and (meta is None or meta.schedule_key != skey)
            info = None
            if recompute:
                last = None
                if meta is not None and meta.last_automated_data_interval_start is not None:
                    last = DataInterval(meta.last_automated_data_interval_start,
                                        meta.last_automated_data_interval_end)
                try:
                    info = next_run_info(sdag, last, now=now)
                except Exception as exc:
                    error = f"{type(exc).__name__}: {exc}"
            row_values = dict(values)
            if recompute:
                row_values.update(self._next_values(info), schedule_key=skey)
                run_after = info.run_after if info else None
            else:
                run_after = meta.next_dagrun_run_after if meta is not None else None
            if meta is None:
                # A new DAG starts paused unless its file says otherwise (dags_are_paused_at_creation).
                paused = body.get("is_paused_upon_creation") is not False
                row_values.update(self._due_values(dag_id, active=True, paused=paused, run_after=run_after),
                                  is_paused=paused, list_pk=keys.dags_list_pk(dag_id, self.config.index_shards),
                                  list_sk=dag_id)
                item = M(keys.dag_pk(dag_id), keys.META, **{k: v for k, v in row_values.items() if v is not None})
                # Another parser creating the same dag_id makes this fail; the retry then sees its row.
                if _conditional(lambda item=item: item.save(condition=M.pk.does_not_exist())):
                    return "stored", error
                continue
            row_values.update(self._due_values(dag_id, active=True, paused=bool(meta.is_paused),
                                               run_after=run_after))
            # Conditional on everything this decision read, so a concurrent pause, advance or takeover
            # makes us re-read instead of overwriting it.
            condition = ((M.relative_fileloc == meta.relative_fileloc) & (M.dag_hash == meta.dag_hash)
                         & (M.is_active == meta.is_active) & (M.is_paused == meta.is_paused)
                         & self._expect_next(M, meta.next_dagrun_logical_date))
            row = M(keys.dag_pk(dag_id), keys.META)
            actions = self._actions(M, row_values)
            if _conditional(lambda row=row, actions=actions, condition=condition: row.update(actions, condition)):
                self._resize_dag_limits(dag_id, meta, body)
                return "stored", error
        raise StoreError(f"DAG {dag_id}: its row kept changing under {_RETRIES} attempts to store it")

    def _resize_dag_limits(self, dag_id: str, meta: Any, body: dict[str, Any]) -> None:
        """The DAG's limit items in use follow a changed max_active_runs, and its active runs' items a changed
        max_active_tasks: Airflow applies the DAG's current values to runs already going."""
        new_runs, new_tasks = body.get("max_active_runs"), body.get("max_active_tasks")
        if new_runs is not None and int(new_runs) != int(meta.max_active_runs):
            self._resize(dag_runs_limit(dag_id), int(new_runs), create=False)
        if new_tasks is not None and int(new_tasks) != int(meta.max_active_tasks):
            for run in self.active_runs():
                if run.dag_id == dag_id:
                    self._resize(run_tasks_limit(dag_id, run.run_id), int(new_tasks), create=False)

    def _deactivate(self, dag_id: str, path: str) -> bool:
        """Mark a DAG inactive, only while ``path`` still owns it (another file may have taken it over)."""
        M = self.models.dag_meta
        row = M(keys.dag_pk(dag_id), keys.META)
        actions = [M.is_active.set(False), M.due_pk.remove(), M.due_sk.remove()]
        return _conditional(lambda: row.update(actions, (M.relative_fileloc == path) & (M.is_active == True)))  # noqa: E712

    def _put_file(self, parsed: ParsedFile, owned: list[str], errors: list[dict[str, Any]],
                  now: dt.datetime, previous: Any) -> None:
        F = self.models.file
        stored = []
        for original in errors[:_MAX_IMPORT_ERRORS]:
            error = dict(original)
            if len(error.get("stacktrace") or "") > _MAX_STACKTRACE:
                error["stacktrace"] = "...\n" + error["stacktrace"][-_MAX_STACKTRACE:]
            stored.append(error)
        item = F(keys.file_pk(parsed.relative_path), keys.META, relative_path=parsed.relative_path,
                 file_hash=parsed.file_hash, file_version=parsed.file_version, dag_ids=sorted(owned),
                 import_errors=stored or None, parsed_at=now)
        if stored:  # sparse: only files with import errors are listed
            item.list_pk = keys.import_errors_list_pk(parsed.relative_path, self.config.index_shards)
            item.list_sk = parsed.relative_path
        if previous is None and not owned and not stored:
            return  # a sibling module with no DAGs and no errors: nothing to remember about it
        if previous is not None and all(
                getattr(previous, name) == getattr(item, name)
                for name in ("file_hash", "file_version", "dag_ids", "import_errors")):
            return  # a redelivered event: nothing changed, so nothing is written (parsed_at keeps the first time)
        item.save()

    def remove_dag_file(self, relative_path: str) -> list[str]:
        previous = self._file_item(relative_path)
        if previous is None:
            return []
        deactivated = [d for d in sorted(previous.dag_ids or []) if self._deactivate(d, relative_path)]
        # Last, so a crash before it leaves the file item for the retry to find.
        F = self.models.file
        _conditional(lambda: F(keys.file_pk(relative_path), keys.META).delete())
        return deactivated

    def get_dag_meta(self, dag_id: str) -> DagMeta | None:
        item = self._meta_item(dag_id)
        return None if item is None else self._meta_from_item(item)

    def _listed_keys(self, model: Any, list_pks: Iterable[str]) -> list[tuple[str, str]]:
        found = []
        for list_pk in list_pks:
            found += [(i.pk, i.sk) for i in model.list_index.query(list_pk)]
        return found

    def _batch_get(self, model: Any, item_keys: list[tuple[str, str]]) -> list[Any]:
        return list(model.batch_get(item_keys, consistent_read=True)) if item_keys else []

    def list_dags(self, *, include_inactive: bool = False) -> list[DagMeta]:
        M = self.models.dag_meta
        found = self._listed_keys(M, (f"DAGS#{i}" for i in self._shards()))
        metas = [self._meta_from_item(i) for i in self._batch_get(M, found)]
        return sorted((m for m in metas if include_inactive or m.is_active), key=lambda m: m.dag_id)

    def list_import_errors(self) -> list[dict[str, Any]]:
        F = self.models.file
        found = self._listed_keys(F, (f"IMPORT_ERRORS#{i}" for i in self._shards()))
        out = []
        for item in self._batch_get(F, found):
            for error in item.import_errors or []:
                out.append({**error, "timestamp": item.parsed_at.isoformat() if item.parsed_at else None})
        return sorted(out, key=lambda e: (e["filename"], e.get("dag_id") or "", e["message"]))

    def set_paused(self, dag_id: str, paused: bool, *, now: dt.datetime | None = None) -> bool:
        """Pause or unpause. Given ``now``, unpausing a ``catchup=False`` DAG recomputes its next run from that
        clock, as Airflow's periodic re-parse would have kept it current: otherwise a DAG paused for a month
        would first run for the interval it was paused in. Without ``now`` the stored next run is kept (callers
        with their own clock, such as tests, stay in control of time)."""
        M = self.models.dag_meta
        for _ in range(_RETRIES):
            meta = self._meta_item(dag_id)
            if meta is None:
                return False
            if bool(meta.is_paused) == paused:
                return True
            values: dict[str, Any] = {"is_paused": paused}
            run_after = meta.next_dagrun_run_after
            if not paused and now is not None and not meta.catchup and meta.schedule_key is not None:
                sdag = self.get_serialized_dag(dag_id, meta.dag_hash)
                if sdag is not None:
                    last = None
                    if meta.last_automated_data_interval_start is not None:
                        last = DataInterval(meta.last_automated_data_interval_start,
                                            meta.last_automated_data_interval_end)
                    info = next_run_info(sdag, last, now=now)
                    values.update(self._next_values(info))
                    run_after = info.run_after if info else None
            values.update(self._due_values(dag_id, active=bool(meta.is_active), paused=paused,
                                           run_after=run_after))
            condition = ((M.is_paused == meta.is_paused) & (M.is_active == meta.is_active)
                         & self._expect_next(M, meta.next_dagrun_logical_date))
            row = M(keys.dag_pk(dag_id), keys.META)
            actions = self._actions(M, values)
            if _conditional(lambda row=row, actions=actions, condition=condition: row.update(actions, condition)):
                return True
        return False

    def get_serialized_dag(self, dag_id: str, dag_hash: str) -> Any:
        """The SerializedDAG of that version, or None. Cached: versions never change. Treat it as read-only,
        it is shared by every caller in the process."""
        cache_key = (dag_id, dag_hash)
        with self._lock:
            if cache_key in self._versions:
                self._versions.move_to_end(cache_key)
                return self._versions[cache_key]
        V = self.models.dag_version
        try:
            item = V.get(keys.dag_pk(dag_id), keys.version_sk(dag_hash), consistent_read=True)
        except V.DoesNotExist:
            return None
        sdag = deserialize_dag(self._unpack(item.data, item.s3_key))
        with self._lock:
            self._versions[cache_key] = sdag
            while len(self._versions) > 64:
                self._versions.popitem(last=False)
        return sdag

    def due_dags(self, now: dt.datetime) -> list[DagMeta]:
        M = self.models.dag_meta
        found = []
        for i in self._shards():
            for item in M.due_index.query(f"DUE#{i}", M.due_sk <= ts(now)):
                if item.is_active and not item.is_paused:  # the index lags: skip what it already shows stale
                    found.append(self._meta_from_item(item))
        return sorted(found, key=lambda m: (m.next_dagrun_run_after, m.dag_id))

    def advance_next_dagrun(self, dag_id: str, *, expected_logical_date: dt.datetime | None,
                            next_info: Any, last_automated: Any) -> bool:
        M = self.models.dag_meta
        values = self._next_values(next_info)
        if last_automated is not None:
            values.update(last_automated_data_interval_start=last_automated.start,
                          last_automated_data_interval_end=last_automated.end)
        expect = self._expect_next(M, expected_logical_date)
        row = M(keys.dag_pk(dag_id), keys.META)
        run_after = next_info.run_after if next_info is not None else None
        # One write on the hot path: a DAG found through due_dags is almost always active and unpaused.
        fast = {**values, **self._due_values(dag_id, active=True, paused=False, run_after=run_after)}
        if _conditional(lambda: row.update(self._actions(M, fast),
                                           expect & (M.is_active == True) & (M.is_paused == False))):  # noqa: E712
            return True
        for _ in range(_RETRIES):
            meta = self._meta_item(dag_id)
            if meta is None or meta.next_dagrun_logical_date != expected_logical_date:
                return False  # another scheduler advanced it (or the DAG is gone)
            slow = {**values, **self._due_values(dag_id, active=bool(meta.is_active), paused=bool(meta.is_paused),
                                                 run_after=run_after)}
            condition = expect & (M.is_active == meta.is_active) & (M.is_paused == meta.is_paused)
            if _conditional(lambda slow=slow, condition=condition: row.update(self._actions(M, slow), condition)):
                return True
        return False

    # ================================================================================================= runs
    def _run_from_item(self, item: Any) -> DagRun:
        return DagRun(
            dag_id=item.dag_id, run_id=item.run_id, run_type=item.run_type, dag_hash=item.dag_hash,
            state=DagRunState(item.state), logical_date=item.logical_date,
            data_interval_start=item.data_interval_start, data_interval_end=item.data_interval_end,
            run_after=item.run_after, conf=item.conf or {}, queued_at=item.queued_at,
            start_date=item.start_date, end_date=item.end_date, note=item.note,
        )

    def create_run(self, run: DagRun) -> bool:
        R = self.models.run
        sort_date = run.logical_date or run.run_after or run.queued_at or dt.datetime.now(dt.UTC)
        item = R(keys.dag_pk(run.dag_id), keys.run_sk(run.run_id), dag_id=run.dag_id, run_id=run.run_id,
                 run_type=str(run.run_type), dag_hash=run.dag_hash, state=str(run.state),
                 logical_date=run.logical_date, data_interval_start=run.data_interval_start,
                 data_interval_end=run.data_interval_end, run_after=run.run_after, conf=run.conf or None,
                 queued_at=run.queued_at, start_date=run.start_date, end_date=run.end_date, note=run.note,
                 run_date_sk=keys.run_date_sk(sort_date, run.run_id))
        if run.state in _ACTIVE_RUN_STATES:
            item.active_pk = keys.active_pk(run.dag_id, run.run_id, self.config.index_shards)
            item.active_sk = keys.active_sk(sort_date, run.dag_id, run.run_id)
        return _conditional(lambda: item.save(condition=R.pk.does_not_exist()))

    def get_run(self, dag_id: str, run_id: str) -> DagRun | None:
        R = self.models.run
        try:
            return self._run_from_item(R.get(keys.dag_pk(dag_id), keys.run_sk(run_id), consistent_read=True))
        except R.DoesNotExist:
            return None

    def list_runs(self, dag_id: str, *, limit: int | None = None) -> list[DagRun]:
        R = self.models.run
        items = R.by_date.query(keys.dag_pk(dag_id), scan_index_forward=False, consistent_read=True, limit=limit)
        return [self._run_from_item(i) for i in items]

    def previous_run(self, dag_id: str, logical_date: dt.datetime, *, scheduled_only: bool = False) -> DagRun | None:
        R = self.models.run
        condition = R.logical_date.exists()
        if scheduled_only:
            condition &= R.run_type != "manual"
        items = R.by_date.query(keys.dag_pk(dag_id), R.run_date_sk < ts(logical_date), scan_index_forward=False,
                                consistent_read=True, filter_condition=condition, limit=1)
        return next((self._run_from_item(i) for i in items), None)

    def active_runs(self) -> list[DagRun]:
        R = self.models.run
        runs = []
        for i in self._shards():
            runs += [self._run_from_item(item) for item in R.active_index.query(f"ACTIVE#{i}")]
        return sorted((r for r in runs if r.state in _ACTIVE_RUN_STATES),
                      key=lambda r: (r.logical_date or r.run_after or r.queued_at or dt.datetime.min.replace(
                          tzinfo=dt.UTC), r.dag_id, r.run_id))

    def set_run_state(self, dag_id: str, run_id: str, *, expected: Iterable[DagRunState], state: DagRunState,
                      now: dt.datetime, note: str | None = None) -> bool:
        R = self.models.run
        expected = [str(s) for s in expected]
        if not expected:
            return False
        state = DagRunState(state)
        actions = [R.state.set(str(state))]
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
        if note is not None:
            actions.append(R.note.set(note))
        row = R(keys.dag_pk(dag_id), keys.run_sk(run_id))
        return _conditional(lambda: _update(row, actions, R.pk.exists() & R.state.is_in(*expected)))

    # ======================================================================================= task instances
    def _ti_from_item(self, item: Any) -> TaskInstance:
        return TaskInstance(
            dag_id=item.dag_id, run_id=item.run_id, task_id=item.task_id, map_index=int(item.map_index),
            state=TaskInstanceState(item.state) if item.state else None, try_number=int(item.try_number),
            try_id=item.try_id, pool=item.pool, pool_slots=int(item.pool_slots),
            priority_weight=int(item.priority_weight), executor=item.executor, queued_at=item.queued_at,
            start_date=item.start_date, end_date=item.end_date, next_retry_at=item.next_retry_at,
            lease_expires_at=item.lease_expires_at, held_limits=list(item.held_limits or []),
            hostname=item.hostname, xcom_length=None if item.xcom_length is None else int(item.xcom_length),
            note=item.note, blocked_reason=item.blocked_reason,
        )

    def get_run_tis(self, dag_id: str, run_id: str) -> list[TaskInstance]:
        T = self.models.task_instance
        items = T.query(keys.run_pk(dag_id, run_id), T.sk.startswith(keys.TI_PREFIX), consistent_read=True)
        return [self._ti_from_item(i) for i in items]

    def get_ti(self, key: TIKey) -> TaskInstance | None:
        T = self.models.task_instance
        try:
            item = T.get(keys.run_pk(key.dag_id, key.run_id), keys.ti_sk(key.task_id, key.map_index),
                         consistent_read=True)
        except T.DoesNotExist:
            return None
        return self._ti_from_item(item)

    def transition_ti(self, key: TIKey, *, expected: Iterable[TaskInstanceState | None],
                      state: TaskInstanceState, expected_try_id: str | None = None,
                      fields: Mapping[str, Any] | None = None) -> bool:
        T = self.models.task_instance
        expected = set(expected)
        fields = dict(fields or {})
        unknown = set(fields) - (_TI_FIELDS - _TI_IDENTITY)
        if unknown:
            raise ValueError(f"transition_ti: {sorted(unknown)} are not settable TaskInstance fields")
        if not expected:
            return False
        pk, sk = keys.run_pk(key.dag_id, key.run_id), keys.ti_sk(key.task_id, key.map_index)
        if expected == {None}:
            ti = TaskInstance(key.dag_id, key.run_id, key.task_id, key.map_index, state=state, **fields)
            item = T(pk, sk, **{f: getattr(ti, f) for f in _TI_FIELDS})
            item.state = str(state)
            condition = T.pk.does_not_exist()
            if expected_try_id is not None:
                condition &= T.try_id == expected_try_id  # cannot hold on an absent item: False, as asked
            return _conditional(lambda: item.save(condition=condition))
        actions = [T.state.set(str(state))]
        for name, value in fields.items():
            attr = getattr(T, name)
            if value is None:
                actions.append(attr.remove())
            else:
                actions.append(attr.set(list(value) if name == "held_limits" else value))
        states = sorted(str(s) for s in expected if s is not None)
        condition = T.state.is_in(*states)
        if None in expected:
            # The update may create the item, so it carries its identity.
            actions += [T.dag_id.set(key.dag_id), T.run_id.set(key.run_id), T.task_id.set(key.task_id),
                        T.map_index.set(key.map_index)]
            condition = T.pk.does_not_exist() | condition
        if expected_try_id is not None:
            condition &= T.try_id == expected_try_id
        row = T(pk, sk)
        return _conditional(lambda: _update(row, actions, condition))

    def start_ti(self, key: TIKey, *, try_id: str, fields: Mapping[str, Any]) -> TaskInstance | None:
        T = self.models.task_instance
        row = T(keys.run_pk(key.dag_id, key.run_id), keys.ti_sk(key.task_id, key.map_index))
        actions = [T.state.set(str(TaskInstanceState.RUNNING))]
        for name, value in fields.items():
            attr = getattr(T, name)
            actions.append(attr.remove() if value is None else attr.set(value))
        condition = (T.state == str(TaskInstanceState.QUEUED)) & (T.try_id == try_id)
        try:
            row.update(actions=actions, condition=condition)  # ALL_NEW: the row is the item as written
        except UpdateError as exc:
            if _condition_failed(exc):
                return None
            raise
        return self._ti_from_item(row)

    def heartbeat(self, key: TIKey, *, try_id: str, lease_expires_at: dt.datetime) -> bool:
        T = self.models.task_instance
        row = T(keys.run_pk(key.dag_id, key.run_id), keys.ti_sk(key.task_id, key.map_index))
        condition = (T.try_id == try_id) & T.state.is_in(str(TaskInstanceState.QUEUED),
                                                         str(TaskInstanceState.RUNNING))
        return _conditional(lambda: _update(row, [T.lease_expires_at.set(lease_expires_at)], condition))

    # ======================================================================================= limits, pools
    def set_blocked_reason(self, key: TIKey, reason: str | None, *,
                           expected_state: TaskInstanceState = TaskInstanceState.SCHEDULED) -> bool:
        """Record why the instance was last not queued, only while it is still in ``expected_state``."""
        T = self.models.task_instance
        row = T(keys.run_pk(key.dag_id, key.run_id), keys.ti_sk(key.task_id, key.map_index))
        action = T.blocked_reason.remove() if reason is None else T.blocked_reason.set(reason)
        return _conditional(lambda: _update(row, [action], T.state == str(expected_state)))

    def _limit_item(self, limit_id: str) -> Any:
        L = self.models.limit
        try:
            return L.get(keys.limit_pk(limit_id), keys.LIMIT_SK, consistent_read=True)
        except L.DoesNotExist:
            return None

    def _new_limit(self, limit_id: str, limit: int, *, pool: str | None = None, description: str = "") -> Any:
        L = self.models.limit
        item = L(keys.limit_pk(limit_id), keys.LIMIT_SK, limit_id=limit_id, limit=limit, available=limit,
                 holders={})
        if pool is not None:
            item.pool_name = pool
            item.description = description
            item.list_pk = keys.POOLS_LIST_PK
            item.list_sk = pool
        return item

    def _ensure_limit(self, limit_id: str, limit: int) -> None:
        """Create the limit item on first use (a conditional put, so racing creators agree), once per process.

        Pools other than default_pool are never created here: a task naming a pool nobody created is not
        schedulable, as in Airflow, so its takes simply fail.
        """
        if limit_id in self._limits_known:
            return
        if limit_id == pool_limit(DEFAULT_POOL):
            item = self._new_limit(limit_id, DEFAULT_POOL_SLOTS, pool=DEFAULT_POOL,
                                   description="Default pool")
        elif pool_of(limit_id) is not None:
            item = None
        else:
            item = self._new_limit(limit_id, limit)
        if item is not None:
            L = self.models.limit
            _conditional(lambda: item.save(condition=L.pk.does_not_exist()))
        with self._lock:
            self._limits_known.add(limit_id)

    def take_slots(self, limit_id: str, holder: str, slots: int, *, limit: int, now: dt.datetime) -> bool:
        L = self.models.limit
        h = keys.encode_holder(holder)
        row = L(keys.limit_pk(limit_id), keys.LIMIT_SK)
        actions = [L.available.set(L.available - slots), L.holders[h].set({"slots": slots, "at": ts(now)})]
        # A negative limit is unlimited (Airflow's pool slots = -1); ``available`` still counts what is held.
        condition = ((L.available >= slots) | (L.limit < 0)) & L.holders[h].does_not_exist()
        if _conditional(lambda: _update(row, actions, condition)):
            return True
        if limit_id in self._limits_known:
            return False
        # Refused by a limit this process has not seen yet: perhaps it does not exist (a run's max_active_tasks
        # item before its first try). Created on that first refusal, not checked before every first take: the
        # common case (the item exists) then costs one request, on the path from one task's end to the next.
        self._ensure_limit(limit_id, limit)
        return _conditional(lambda: _update(row, actions, condition))

    def release_slots(self, limit_id: str, holder: str) -> bool:
        L = self.models.limit
        h = keys.encode_holder(holder)
        row = L(keys.limit_pk(limit_id), keys.LIMIT_SK)
        # One write: the holder's own entry says how many slots go back.
        actions = [L.available.set(L.available + L.holders[h]["slots"]), L.holders[h].remove()]
        return _conditional(lambda: _update(row, actions, L.holders[h].exists()))

    @staticmethod
    def _holders(item: Any) -> dict[str, dict[str, Any]]:
        raw = item.holders.as_dict() if hasattr(item.holders, "as_dict") else dict(item.holders or {})
        return {keys.decode_holder(k): v for k, v in raw.items()}

    def get_limit(self, limit_id: str) -> LimitState | None:
        item = self._limit_item(limit_id)
        if item is None:
            return None
        holders = self._holders(item)
        return LimitState(
            limit=int(item.limit), available=int(item.available),
            holders={h: int(v["slots"]) for h, v in holders.items()},
            taken_at={h: parse_ts(v["at"]) for h, v in holders.items() if v.get("at")},
        )

    def _resize(self, limit_id: str, limit: int, *, create: bool, description: str | None = None) -> Any:
        """Set the limit to ``limit``, moving ``available`` by the same delta so holders keep their slots.

        Conditional on the limit read, so two resizes cannot both apply their delta to one old value.
        Returns the item as written, or None (absent and ``create`` is False, or too much contention).
        """
        L = self.models.limit
        for _ in range(_RETRIES):
            item = self._limit_item(limit_id)
            if item is None:
                if not create:
                    return None
                pool = pool_of(limit_id)
                new = self._new_limit(limit_id, limit, pool=pool, description=description or "")
                if _conditional(lambda new=new: new.save(condition=L.pk.does_not_exist())):
                    return new
                continue
            actions = []
            if int(item.limit) != limit:
                actions += [L.limit.set(limit), L.available.set(L.available + (limit - int(item.limit)))]
            if description is not None and item.description != description:
                actions.append(L.description.set(description))
            if not actions:
                return item
            row = L(keys.limit_pk(limit_id), keys.LIMIT_SK)
            if _conditional(lambda row=row, actions=actions, old=int(item.limit):
                            row.update(actions, L.limit == old)):
                return row
        return None

    def resize_limit(self, limit_id: str, limit: int) -> bool:
        return self._resize(limit_id, limit, create=True) is not None

    def _pool_from_item(self, item: Any) -> Pool:
        holders = self._holders(item)
        return Pool(name=item.pool_name, slots=int(item.limit), description=item.description or "",
                    occupied=sum(int(v["slots"]) for v in holders.values()))

    def get_pool(self, name: str) -> Pool | None:
        item = self._limit_item(pool_limit(name))
        if item is None and name == DEFAULT_POOL:
            self._limits_known.discard(pool_limit(name))
            self._ensure_limit(pool_limit(name), DEFAULT_POOL_SLOTS)
            item = self._limit_item(pool_limit(name))
        return None if item is None else self._pool_from_item(item)

    def list_pools(self) -> list[Pool]:
        L = self.models.limit
        found = set(self._listed_keys(L, [keys.POOLS_LIST_PK]))
        found.add((keys.limit_pk(pool_limit(DEFAULT_POOL)), keys.LIMIT_SK))  # the index may lag its creation
        pools = {p.name: p for p in (self._pool_from_item(i) for i in self._batch_get(L, sorted(found)))}
        if DEFAULT_POOL not in pools:
            default = self.get_pool(DEFAULT_POOL)
            if default is not None:
                pools[DEFAULT_POOL] = default
        return [pools[n] for n in sorted(pools)]

    def set_pool(self, name: str, slots: int, description: str = "") -> Pool:
        if slots < -1:
            raise ValueError("pool slots must be >= 0, or -1 for unlimited")
        item = self._resize(pool_limit(name), slots, create=True, description=description)
        if item is None:
            raise StoreError(f"pool {name}: too much contention to resize it")
        with self._lock:
            self._limits_known.add(pool_limit(name))
        return self.get_pool(name) or self._pool_from_item(item)

    def delete_pool(self, name: str) -> bool:
        if name == DEFAULT_POOL:
            raise DefaultPoolCannotBeDeleted()
        L = self.models.limit
        row = L(keys.limit_pk(pool_limit(name)), keys.LIMIT_SK)
        deleted = _conditional(lambda: row.delete(L.pk.exists()))
        with self._lock:
            self._limits_known.discard(pool_limit(name))
        return deleted

    # ================================================================================================ XComs
    def put_xcom(self, key: TIKey, xcom_key: str, value: Any, *, now: dt.datetime) -> None:
        X = self.models.xcom
        raw = canonical_json({"v": value})
        data, s3_key = self._pack(raw, f"xcoms/{key.dag_id}/{key.run_id}/{key.task_id}/{key.map_index}/"
                                       f"{xcom_key}.json.gz")
        X(keys.run_pk(key.dag_id, key.run_id), keys.xcom_sk(key.task_id, key.map_index, xcom_key),
          dag_id=key.dag_id, run_id=key.run_id, task_id=key.task_id, map_index=key.map_index, key=xcom_key,
          data=data, s3_key=s3_key, created_at=now).save()

    def get_xcom(self, key: TIKey, xcom_key: str, default: Any = None) -> Any:
        X = self.models.xcom
        try:
            item = X.get(keys.run_pk(key.dag_id, key.run_id), keys.xcom_sk(key.task_id, key.map_index, xcom_key),
                         consistent_read=True)
        except X.DoesNotExist:
            return default
        return self._unpack(item.data, item.s3_key)["v"]

    def _xcom_items(self, dag_id: str, run_id: str, task_id: str, map_index: int | None) -> Iterator[Any]:
        X = self.models.xcom
        prefix = keys.xcom_task_prefix(task_id, map_index)
        return X.query(keys.run_pk(dag_id, run_id), X.sk.startswith(prefix), consistent_read=True)

    def list_xcoms(self, dag_id: str, run_id: str, task_id: str,
                   map_index: int | None = None) -> dict[tuple[int, str], Any]:
        return {(int(i.map_index), i.key): self._unpack(i.data, i.s3_key)["v"]
                for i in self._xcom_items(dag_id, run_id, task_id, map_index)}

    def clear_xcoms(self, key: TIKey) -> int:
        count = 0
        for item in self._xcom_items(key.dag_id, key.run_id, key.task_id, key.map_index):
            item.delete()
            count += 1
        return count
