"""S3 notifications for DAG files: which keys changed, and what the parser does about each.

S3 delivers at least once and not in order, so a record is only a hint: a created key is parsed at its
*latest* version (``parse_s3_dag_files`` fetches it fresh), and a removal whose key exists again by the time we
look is treated as a change, not a deletion. Handling the same event twice gives the same result.

An event is input like any other: a record naming another bucket than the environment's own, or a key the mirror
refuses (``..``, ``//``), is rejected with its reason and never read, and nothing is raised for it: a retry would
reject it again. A record whose *handling* fails (Updraft's own failure: the mirror, the parser, the file's store
write; an import error in the file is a result, not a failure) is reported with its error after the event's other
records are handled, counted on the file's record, and listed under ``retry`` while the count is below the
configured attempts: the parser handler then raises :class:`ParseHandlingFailed`, so Lambda's retry of the event
(on AWS) or the queue's redelivery (local mode) handles it again. At the last attempt the file gets an import
error saying its parse kept failing, and why (``dag_registration.record_parse_failure``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_plus

from updraft.model.parse_results import ParsedFile
from updraft.parsing.options import ParseOptions
from updraft.parsing.s3 import DagFileNotFound, folder_prefix, parse_s3_dag_files, relative_key


class ParseHandlingFailed(RuntimeError):
    """Some files of the event could not be handled and have attempts left: the event is to be delivered again."""


@dataclass(frozen=True)
class DagFileEvent:
    """One S3 record about a key under the DAGs prefix."""

    kind: str  # "created" or "removed"
    bucket: str
    key: str
    version_id: str | None
    sequencer: str | None


@dataclass
class DagFileEvents:
    """The records of one notification: those to handle, and those refused (``s3://bucket/key`` -> why)."""

    events: list[DagFileEvent] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)


def dag_file_events(event: dict[str, Any], *, prefix: str, bucket: str | None) -> DagFileEvents:
    """The records that concern ``.py`` files under ``prefix`` in ``bucket``; keys arrive URL-encoded (``+`` is
    a space).

    ``prefix`` and ``bucket`` have no default: they are the environment's ``UPDRAFT_DAGS_PREFIX`` (which the
    workers honour too: a default here once let the parser quietly watch ``dags/`` while the workers read another
    folder) and ``UPDRAFT_BUCKET`` (the only bucket whose DAG files this environment runs; without it, every
    record is rejected). Keys outside ``prefix`` and files other than ``.py`` are not DAG files and are skipped
    silently (a notification still watching an old prefix sends them).
    """
    prefix = folder_prefix(prefix)
    records = event.get("Records")
    if not isinstance(records, list):
        raise ValueError("not an S3 notification: the event has no 'Records' list")
    out = DagFileEvents()
    for position, record in enumerate(records):
        s3 = record.get("s3") if isinstance(record, dict) else None
        obj = s3.get("object") if isinstance(s3, dict) else None
        named = s3.get("bucket") if isinstance(s3, dict) else None
        if not isinstance(obj, dict) or not isinstance(named, dict) or not isinstance(obj.get("key"), str):
            out.rejected[f"record {position}"] = "not an S3 object record (no s3.bucket or s3.object.key)"
            continue
        key = unquote_plus(obj["key"])
        name = str(record.get("eventName", ""))
        where = f"s3://{named.get('name', '')}/{key}"
        if not key.startswith(prefix) or not key.endswith(".py"):
            continue
        if bucket is None:
            out.rejected[where] = "this environment's bucket is not configured (UPDRAFT_BUCKET)"
            continue
        if named.get("name") != bucket:
            out.rejected[where] = f"not this environment's bucket ({bucket})"
            continue
        if relative_key(key, prefix) is None:
            out.rejected[where] = "not a DAG file path ('..', '.', empty or __pycache__ parts)"
            continue
        if name.startswith("ObjectCreated:"):
            kind = "created"
        elif name.startswith("ObjectRemoved:"):
            kind = "removed"
        else:
            continue
        out.events.append(DagFileEvent(kind, bucket, key, obj.get("versionId"), obj.get("sequencer")))
    return out


def handle_dag_file_events(event: dict[str, Any], *, s3_client: Any, prefix: str, bucket: str | None,
                           workdir: str | None = None, options: ParseOptions | None = None,
                           store: Any = None, now: dt.datetime | None = None,
                           paused_at_creation: bool = True, attempts: int | None = None) -> dict[str, Any]:
    """Parse every changed DAG file the event names (each once, all concurrently) and report removed ones.

    The result lists, per key, the DAGs found and the import errors, and per file parsed how long its parse took
    (``parse_seconds``, by relative path, only when some were parsed). With a ``store`` (the parser Lambda
    passes one) each parsed file is saved as soon as it is parsed and each removed file's DAGs are deactivated;
    the import errors reported are then the store's, which include DAG ids refused because another file already
    defines them. Saving is idempotent, so a redelivered event changes nothing (its DAGs come back as
    ``unchanged``). Rejected records are listed under ``rejected`` and records whose handling failed under
    ``failed`` (both only when there are some). With a store and ``attempts``, each failed file's failure is
    counted (see the module's docstring) and the keys to handle again are listed under ``retry``; a removal whose
    store write failed is always to be handled again (it has no record to count on: Lambda's own retries bound it).
    """
    now = now or dt.datetime.now(dt.UTC)
    found = dag_file_events(event, prefix=prefix, bucket=bucket)
    parsed: dict[str, Any] = {}
    removed: list[str] = []
    deactivated: dict[str, list[str]] = {}
    failed: dict[str, str] = {}
    versions: dict[str, str | None] = {}
    durations: dict[str, float] = {}  # relative path -> seconds its parse took
    keys = list(dict.fromkeys(item.key for item in found.events))
    if keys and bucket is not None:
        try:
            contexts = _timetable_contexts(store, keys, prefix)
            for key, result in parse_s3_dag_files(s3_client, bucket, keys, prefix=prefix, workdir=workdir,
                                                  options=options, timetable_contexts=contexts):
                try:
                    if isinstance(result, DagFileNotFound):
                        removed.append(key)
                        if store is not None:
                            deactivated[key] = _remove(store, key, prefix)
                    else:
                        versions[key] = result.file_version
                        durations[result.relative_path] = result.duration_s
                        parsed[key] = _entry(result, store, now, paused_at_creation)
                except Exception as exc:  # one file's store write: the others are still handled
                    failed[key] = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # the mirror could not be synced: no key of this event was handled
            for key in keys:
                if key not in parsed and key not in removed and key not in failed:
                    failed[key] = f"{type(exc).__name__}: {exc}"
    out: dict[str, Any] = {"parsed": parsed, "removed": removed}
    if durations:
        out["parse_seconds"] = durations
    if store is not None:
        out["deactivated"] = deactivated
    if found.rejected:
        out["rejected"] = found.rejected
    if failed:
        out["failed"] = failed
        if store is not None and attempts is not None and bucket is not None:
            retry = [key for key in failed if key in removed or _counted(store, s3_client, bucket, key, prefix,
                                                                         versions, failed, attempts, now)]
            if retry:
                out["retry"] = retry
    return out


def _counted(store: Any, s3_client: Any, bucket: str, key: str, prefix: str, versions: dict[str, str | None],
             failed: dict[str, str], attempts: int, now: dt.datetime) -> bool:
    """Count the file's failed handling; whether it has attempts left (or its failure could not even be counted)."""
    # lazy: cold start (the parser Lambda imports the store models only when it records)
    from updraft.scheduling.commands import record_parse_failure

    relative = relative_key(key, prefix)
    if relative is None:
        return False
    version = versions[key] if key in versions else _object_version(s3_client, bucket, key)
    try:
        count = record_parse_failure(store, relative, version, failed[key], attempts=attempts, now=now)
    except Exception as exc:  # the store itself fails: deliver the event again, bounded by the deliverer
        failed[key] += f" (and counting the failure failed: {type(exc).__name__}: {exc})"
        return True
    return count < attempts


def _object_version(s3_client: Any, bucket: str, key: str) -> str | None:
    """The key's latest VersionId (its ETag in an unversioned bucket) as a parse would record it, or None."""
    try:
        head = s3_client.head_object(Bucket=bucket, Key=key)
    except Exception:  # gone or unreadable: the failure is counted for no particular version
        return None
    version = head.get("VersionId")
    if not version or version == "null":
        version = str(head.get("ETag", "")).strip('"') or None
    return version


def _timetable_contexts(store: Any, keys: list[str], prefix: str) -> dict[str, str]:
    """Where the files' custom timetables are evaluated from (their DAGs' runs as stored); none without a store."""
    if store is None:
        return {}
    # lazy: cold start (timetable horizons only when a file is parsed)
    from updraft.parsing.timetable_horizons import contexts_for

    return contexts_for(store, [rel for key in keys if (rel := relative_key(key, prefix)) is not None])


def _remove(store: Any, key: str, prefix: str) -> list[str]:
    # lazy: cold start (the parser Lambda imports the store models only when it records)
    from updraft.scheduling.commands import remove_dag_file

    relative = relative_key(key, prefix)
    return remove_dag_file(store, relative) if relative is not None else []


def _entry(result: ParsedFile, store: Any, now: dt.datetime, paused_at_creation: bool) -> dict[str, Any]:
    # lazy: cold start (the parser Lambda imports the store models only when it records)
    from updraft.scheduling.commands import register_parsed_file

    entry: dict[str, Any] = {
        "relative_path": result.relative_path,
        "file_version": result.file_version,
        "file_hash": result.file_hash,
        "dag_ids": result.dag_ids,
        "import_errors": [e.to_dict() for e in result.import_errors],
    }
    if store is not None:
        outcome = register_parsed_file(store, result, now=now, paused_at_creation=paused_at_creation)
        entry["import_errors"] = outcome.import_errors
        entry["store"] = {"stored": outcome.stored, "unchanged": outcome.unchanged,
                          "duplicates": outcome.duplicates, "deactivated": outcome.deactivated}
    return entry
