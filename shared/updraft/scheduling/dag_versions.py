"""The serialized DAG version a row or a run is pinned to, looked up where scheduling needs it whole."""

from __future__ import annotations

from updraft.serialization.model import SerializedDAG
from updraft.store.api import Store


def pinned_dag(store: Store, dag_id: str, dag_hash: str) -> SerializedDAG:
    """The version ``dag_hash`` of ``dag_id``, from the store's one cache of versions.

    Registration stores a version before any DAG row or run names it, so a missing one means a broken store:
    raised here, by name, instead of failing later on an attribute of None.
    """
    found = store.get_serialized_dag(dag_id, dag_hash)
    if found is None:
        raise LookupError(f"DAG {dag_id!r} has no stored version {dag_hash!r}")
    return found
