"""The DAG <-> JSON contract.

A serialized DAG is ``{"__version": SCHEMA_VERSION, "dag": {...}}``: the DAG's fields (``timetable`` holds
``{"__type": <class path>, "__var": <timetable.serialize()>}``, see ``updraft.timetables.registry``) and
``tasks``, a list sorted by task_id. ``canonical_json`` gives its deterministic bytes and ``dag_hash`` their
SHA-256, so the same file always gives the same hash and a changed DAG always gives a new one.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from updraft.serialization.model import SCHEMA_VERSION, SchemaVersionError, SerializedDAG, SerializedTask

if TYPE_CHECKING:
    from updraft.sdk.dag import DAG

__all__ = [
    "SCHEMA_VERSION",
    "SchemaVersionError",
    "SerializedDAG",
    "SerializedTask",
    "canonical_json",
    "dag_hash",
    "deserialize_dag",
    "serialize_dag",
]


def serialize_dag(dag: DAG, *, relative_fileloc: str, file_hash: str) -> dict[str, Any]:
    """The JSON-able document for a live DAG (validate the DAG first: this does not)."""
    # lazy: cold start (the handlers read serialized DAGs; building one loads the SDK)
    from updraft.serialization.from_dag import build_serialized_dag

    return build_serialized_dag(dag, relative_fileloc=relative_fileloc, file_hash=file_hash).to_dict()


def deserialize_dag(data: dict[str, Any]) -> SerializedDAG:
    return SerializedDAG.from_dict(data)


def canonical_json(data: dict[str, Any]) -> bytes:
    """Sorted keys, no whitespace, UTF-8: equal documents give equal bytes."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode()


def dag_hash(data: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(data)).hexdigest()
