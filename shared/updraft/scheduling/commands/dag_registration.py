"""Registering parsed DAG files: which file owns a dag_id, pause at creation, the next run, limit resizes.

This is the DAG processor's policy, as Airflow's ``DagBag.sync_to_db`` and ``DagModel`` keep it; the store only
offers the named conditional writes it is made of (``put_new_dag``, ``update_dag_meta(expected=...)``,
``deactivate_dag(expected_owner=...)``, ``put_version``, ``put_file_record``; a limit's size:
``updraft.limits.resize``). Each decision is read, decide, write conditionally on what was read, and re-read
when another writer got there first, so any number of parsers, schedulers and API calls may act on one DAG at
once.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from updraft.limits import resize
from updraft.model.limits import dag_runs_limit, run_tasks_limit
from updraft.model.parse_results import HORIZON_KEY, ImportErrorRecord, ParsedFile, dag_id_of
from updraft.scheduling.asset_definitions import declare_dag_assets
from updraft.scheduling.holding import limits_table
from updraft.scheduling.run_creation import last_automated_interval, next_run_info, time_restriction
from updraft.serialization import dag_hash, deserialize_dag
from updraft.serialization.model import SerializedDAG
from updraft.store.api import DagMeta, FileRecord, Store
from updraft.store.dags import next_run_fields
from updraft.store.errors import StoreError
from updraft.store.writes import RETRIES
from updraft.timetables.evaluated import EvaluatedTimetable, Horizon

# Longer than a parser Lambda can live (15 minutes): a save in progress is never mistaken for a stale one.
_STALE_OWNER_AFTER = dt.timedelta(minutes=20)


@dataclass
class ParseOutcome:
    """What registering one parsed file did: DAGs stored (new version or unchanged), refused, deactivated."""

    stored: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    deactivated: list[str] = field(default_factory=list)
    import_errors: list[dict[str, Any]] = field(default_factory=list)


def schedule_key(document: dict[str, Any], sdag: SerializedDAG) -> str:
    """Changes exactly when the first next run could change: the timetable's stored form or the bounds."""
    restriction = time_restriction(sdag)
    body = {
        "timetable": document.get("dag", {}).get("timetable"),
        "earliest": restriction.earliest.isoformat() if restriction.earliest else None,
        "latest": restriction.latest.isoformat() if restriction.latest else None,
        "catchup": restriction.catchup,
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:32]


def register_parsed_file(store: Store, parsed: ParsedFile | dict[str, Any], *, now: dt.datetime,
                         paused_at_creation: bool = True) -> ParseOutcome:
    """Store a parsed file: each DAG's version (immutable, keyed by dag_hash), its row (owned by one file: a
    dag_id owned by another active file is refused and becomes an import error on this file), the file's
    import errors, and deactivate DAGs the file no longer defines; and the plugins folder as the file's parse
    loaded it. Idempotent.

    ``paused_at_creation`` is the environment's ``dags_are_paused_at_creation``: whether a DAG seen for the first
    time starts paused when its file does not say (``is_paused_upon_creation``)."""
    if isinstance(parsed, dict):
        parsed = ParsedFile.from_dict(parsed)
    if now.tzinfo is None:
        now = now.replace(tzinfo=dt.UTC)
    path = parsed.relative_path
    outcome = ParseOutcome()
    errors: list[dict[str, Any]] = [e.to_dict() for e in parsed.import_errors]
    previous = store.get_file_record(path)
    owned: list[str] = []
    for document in parsed.dags:
        dag_id = dag_id_of(document)
        result, detail = _register_dag(store, document, dag_id, parsed, now, paused_at_creation)
        if result == "duplicate":
            message = (f"AirflowDagDuplicatedIdException: Ignoring DAG {dag_id} from {path} "
                       f"- also found in {detail}")
            errors.append(_error(path, dag_id, message))
            outcome.duplicates.append(dag_id)
            continue
        owned.append(dag_id)
        (outcome.stored if result == "stored" else outcome.unchanged).append(dag_id)
        if detail:
            errors.append(_error(path, dag_id, detail))
    for dag_id in sorted(set(previous.dag_ids) - set(owned) if previous else ()):
        if store.deactivate_dag(dag_id, expected_owner=path):
            outcome.deactivated.append(dag_id)
    # Last, so a crash before it leaves the previous record for the retry to compare against. A sibling module
    # with no DAGs and no errors leaves nothing to remember.
    if previous is not None or owned or errors:
        store.put_file_record(FileRecord(path, parsed.file_hash, parsed.file_version, sorted(owned), errors,
                                         parsed_at=now), previous=previous)
    if parsed.plugins is not None:  # the plugins folder as this parse loaded it: GET /plugins's answer
        store.record_plugins(parsed.plugins, now)
    outcome.import_errors = errors
    return outcome


def remove_dag_file(store: Store, relative_path: str) -> list[str]:
    """The file was deleted: deactivate its DAGs, drop its import errors; returns the DAGs deactivated."""
    previous = store.get_file_record(relative_path)
    if previous is None:
        return []
    deactivated = [d for d in sorted(previous.dag_ids) if store.deactivate_dag(d, expected_owner=relative_path)]
    # Last, so a crash before it leaves the file record for the retry to find.
    store.delete_file_record(relative_path)
    return deactivated


PARSE_FAILURE = "UpdraftParseHandlingFailed"  # the import error a file gets when its handling keeps failing


def record_parse_failure(store: Store, relative_path: str, version: str | None, error: str, *, attempts: int,
                         now: dt.datetime) -> int:
    """Count one failed handling of the file's object ``version`` (Updraft's own failure: a crashed parser, a
    store write; never the file's import error, which is a result) and return how many there were in a row.

    A failure of another version starts the count again. The DAGs the file had stay as they were (what the
    failing version defines is unknown); when the count reaches ``attempts`` the file gets an import error naming
    the failure, so a file that cannot be handled is seen instead of quietly keeping old DAGs or none. The next
    successful parse writes the file's record afresh, count and import error gone. A lost increment (two
    handlings at once) only allows one attempt more."""
    previous = store.get_file_record(relative_path)
    count = previous.parse_failures + 1 if previous is not None and previous.failed_version == version else 1
    errors = [e for e in (previous.import_errors if previous else []) if not e.get("message", "").startswith(
        PARSE_FAILURE)]
    if count >= attempts:
        errors.append(ImportErrorRecord(
            filename=relative_path, lineno=None, stacktrace=error,
            message=f"{PARSE_FAILURE}: Updraft could not handle the parse of this file ({count} attempts; not an "
                    f"error in the file): {error.splitlines()[0] if error else 'unknown error'}").to_dict())
    record = FileRecord(relative_path, previous.file_hash if previous else None,
                        previous.file_version if previous else None, sorted(previous.dag_ids) if previous else [],
                        errors, parsed_at=now, parse_failures=count, failed_version=version)
    store.put_file_record(record, previous=previous)
    return count


def set_paused(store: Store, dag_id: str, paused: bool, *, now: dt.datetime | None = None) -> bool:
    """Pause or unpause; False if the DAG does not exist. Given ``now``, unpausing a ``catchup=False`` DAG
    recomputes its next run from that clock, as Airflow's periodic re-parse would have kept it current:
    otherwise a DAG paused for a month would first run for the interval it was paused in. Without ``now`` the
    stored next run is kept (callers with their own clock, such as tests, stay in control of time)."""
    for _ in range(RETRIES):
        meta = store.get_dag_meta(dag_id)
        if meta is None:
            return False
        if meta.is_paused == paused:
            return True
        values: dict[str, Any] = {"is_paused": paused}
        if not paused and now is not None and not meta.catchup and meta.schedule_key is not None:
            sdag = store.get_serialized_dag(dag_id, meta.dag_hash)
            if sdag is not None:
                values.update(next_run_fields(next_run_info(sdag, meta, now=now)))
        if store.update_dag_meta(dag_id, values, expected=meta):
            return True
    return False


def _error(path: str, dag_id: str, message: str) -> dict[str, Any]:
    return ImportErrorRecord(filename=path, lineno=None, message=message, stacktrace=message,
                             dag_id=dag_id).to_dict()


def _row_values(document: dict[str, Any], dag_id: str, parsed: ParsedFile, now: dt.datetime) -> dict[str, Any]:
    """The DAG row's fields that come from the file itself (the next run and pause are decided apart)."""
    body = document.get("dag", {})
    owners = sorted({t.get("owner", "airflow") for t in body.get("tasks", [])}) or ["airflow"]
    return {
        "dag_hash": dag_hash(document),
        "relative_fileloc": parsed.relative_path,
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


def _owned_elsewhere(store: Store, meta: DagMeta | None, path: str, now: dt.datetime) -> bool:
    """Whether another active file owns the dag_id. The owner's file record is written after its DAG rows, so a
    fresh row is trusted as is; only a row older than any parse could take is checked against its file, since a
    crash or a lost S3 removal event can leave a row pointing at a file that no longer defines it."""
    if meta is None or meta.relative_fileloc == path or not meta.is_active:
        return False
    if meta.updated_at is not None and now - meta.updated_at < _STALE_OWNER_AFTER:
        return True
    owner = store.get_file_record(meta.relative_fileloc)
    return owner is not None and meta.dag_id in owner.dag_ids


def _register_dag(store: Store, document: dict[str, Any], dag_id: str, parsed: ParsedFile,
                  now: dt.datetime, paused_at_creation: bool) -> tuple[str, str | None]:
    """("stored" | "unchanged", schedule error or None) or ("duplicate", the owning file).

    A custom timetable's horizon (the parser's evaluation, beside the versioned document) goes on the row; a
    DAG whose runs had run out of horizon gets its next run from the new one."""
    horizon = document.get(HORIZON_KEY)
    document = {key: value for key, value in document.items() if key != HORIZON_KEY}
    path = parsed.relative_path
    values = _row_values(document, dag_id, parsed, now)
    digest = values["dag_hash"]
    sdag, sdag_error = None, None
    try:
        sdag = deserialize_dag(document)
    except Exception as exc:  # a newer schema...
        sdag_error = f"{type(exc).__name__}: {exc}"
    if sdag is not None and isinstance(sdag.timetable, EvaluatedTimetable) and horizon is None:
        sdag_error = (f"the custom timetable {sdag.timetable.timetable} was not evaluated by the parser (the file's "
                      "parse gave no horizon of runs), so the DAG cannot be scheduled")
    skey = schedule_key(document, sdag) if sdag is not None else None
    version_written = False
    for _ in range(RETRIES):
        meta = store.get_dag_meta(dag_id)
        if meta is not None and _owned_elsewhere(store, meta, path, now):
            return "duplicate", meta.relative_fileloc
        if (meta is not None and meta.relative_fileloc == path and meta.is_active and meta.dag_hash == digest
                and meta.schedule_key == skey and meta.timetable_horizon == horizon):
            return "unchanged", sdag_error
        if not version_written and (meta is None or meta.dag_hash != digest):
            store.put_version(dag_id, digest, document, now)
            version_written = True
            if sdag is not None:
                declare_dag_assets(store, sdag, now=now)
        error = sdag_error
        row_values = dict(values, timetable_horizon=_newer_horizon(meta, horizon))
        if sdag is not None and (meta is None or meta.schedule_key != skey
                                 or (horizon is not None and meta.next_dagrun_logical_date is None)):
            info = None
            try:
                info = next_run_info(sdag, meta, now=now, horizon=horizon)
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
            row_values.update(next_run_fields(info), schedule_key=skey)
        if meta is None:
            # A new DAG starts as its file says (is_paused_upon_creation), else as the environment's
            # dags_are_paused_at_creation, as in Airflow.
            upon_creation = document.get("dag", {}).get("is_paused_upon_creation")
            row_values["is_paused"] = paused_at_creation if upon_creation is None else bool(upon_creation)
            # Another parser creating the same dag_id makes this fail; the retry then sees its row.
            if store.put_new_dag(dag_id, row_values):
                return "stored", error
            continue
        if store.update_dag_meta(dag_id, row_values, expected=meta):
            _resize_dag_limits(store, dag_id, meta, document.get("dag", {}))
            return "stored", error
    raise StoreError(f"DAG {dag_id}: its row kept changing under {RETRIES} attempts to store it")


def _newer_horizon(meta: DagMeta | None, horizon: dict[str, Any] | None) -> dict[str, Any] | None:
    """The parse's horizon, unless it is stale: one that does not reach the DAG's last automated run while the
    row's does (an evaluation from an older anchor, delivered late) leaves the row's in place."""
    if meta is None or meta.timetable_horizon is None or horizon is None:
        return horizon
    last = last_automated_interval(meta)
    if not Horizon.from_dict(horizon).covers(last) and Horizon.from_dict(meta.timetable_horizon).covers(last):
        return meta.timetable_horizon
    return horizon


def _resize_dag_limits(store: Store, dag_id: str, meta: DagMeta, body: dict[str, Any]) -> None:
    """The DAG's run limit follows a changed max_active_runs, and its active runs' limits a changed
    max_active_tasks (their counters, ``updraft.limits.resize``): Airflow applies the DAG's current values to
    runs already going."""
    new_runs, new_tasks = body.get("max_active_runs"), body.get("max_active_tasks")
    if new_runs is not None and int(new_runs) != meta.max_active_runs:
        resize(limits_table(store), dag_runs_limit(dag_id), int(new_runs))
    if new_tasks is not None and int(new_tasks) != meta.max_active_tasks:
        for run in store.active_runs():
            if run.dag_id == dag_id:
                resize(limits_table(store), run_tasks_limit(dag_id, run.run_id), int(new_tasks))
