"""S3 notifications for DAG files: which keys changed, and what the parser does about each.

S3 delivers at least once and not in order, so a record is only a hint: a created key is parsed at its
*latest* version (``parse_s3_dag_file`` fetches it fresh), and a removal whose key exists again by the time we
look is treated as a change, not a deletion. Handling the same event twice gives the same result.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

from updraft.parsing.options import ParseOptions
from updraft.parsing.s3 import DagFileNotFound, folder_prefix, parse_s3_dag_file, relative_key


@dataclass(frozen=True)
class DagFileEvent:
    """One S3 record about a key under the DAGs prefix."""

    kind: str  # "created" or "removed"
    bucket: str
    key: str
    version_id: str | None
    sequencer: str | None


def dag_file_events(event: dict[str, Any], *, prefix: str) -> list[DagFileEvent]:
    """The records that concern ``.py`` files under ``prefix``; keys arrive URL-encoded (``+`` is a space).

    ``prefix`` has no default: it is the environment's ``UPDRAFT_DAGS_PREFIX``, which the workers honour too,
    and a default here once let the parser quietly watch ``dags/`` while the workers read another folder.
    """
    prefix = folder_prefix(prefix)
    records = event.get("Records")
    if not isinstance(records, list):
        raise ValueError("not an S3 notification: the event has no 'Records' list")
    out = []
    for record in records:
        name = record.get("eventName", "")
        s3 = record.get("s3") or {}
        key = unquote_plus((s3.get("object") or {}).get("key", ""))
        bucket = (s3.get("bucket") or {}).get("name", "")
        if not bucket or not key.startswith(prefix) or not key.endswith(".py"):
            continue
        if name.startswith("ObjectCreated:"):
            kind = "created"
        elif name.startswith("ObjectRemoved:"):
            kind = "removed"
        else:
            continue
        obj = s3["object"]
        out.append(DagFileEvent(kind, bucket, key, obj.get("versionId"), obj.get("sequencer")))
    return out


def handle_dag_file_events(event: dict[str, Any], *, s3_client: Any, prefix: str,
                           workdir: str | None = None, options: ParseOptions | None = None,
                           store: Any = None, now: dt.datetime | None = None) -> dict[str, Any]:
    """Parse every changed DAG file the event names (each once) and report removed ones.

    The result lists, per key, the DAGs found and the import errors. With a ``store`` (the parser Lambda
    passes one) each parsed file is saved and each removed file's DAGs are deactivated; the import errors
    reported are then the store's, which include DAG ids refused because another file already defines them.
    Saving is idempotent, so a redelivered event changes nothing (its DAGs come back as ``unchanged``).
    """
    from updraft.scheduling.dag_registration import register_parsed_file, remove_dag_file

    now = now or dt.datetime.now(dt.UTC)
    parsed: dict[str, Any] = {}
    removed: list[str] = []
    deactivated: dict[str, list[str]] = {}
    for item in dag_file_events(event, prefix=prefix):
        if item.key in parsed or item.key in removed:
            continue
        try:
            result = parse_s3_dag_file(s3_client, item.bucket, item.key, prefix=prefix, workdir=workdir,
                                       options=options)
        except DagFileNotFound:
            removed.append(item.key)
            relative = relative_key(item.key, prefix)
            if store is not None and relative is not None:
                deactivated[item.key] = remove_dag_file(store, relative)
            continue
        entry: dict[str, Any] = {
            "relative_path": result.relative_path,
            "file_version": result.file_version,
            "file_hash": result.file_hash,
            "dag_ids": result.dag_ids,
            "import_errors": [e.to_dict() for e in result.import_errors],
        }
        if store is not None:
            outcome = register_parsed_file(store, result, now=now)
            entry["import_errors"] = outcome.import_errors
            entry["store"] = {"stored": outcome.stored, "unchanged": outcome.unchanged,
                              "duplicates": outcome.duplicates, "deactivated": outcome.deactivated}
        parsed[item.key] = entry
    out: dict[str, Any] = {"parsed": parsed, "removed": removed}
    if store is not None:
        out["deactivated"] = deactivated
    return out
