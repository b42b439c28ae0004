"""What every aggregate of the store shares: its config, models, blobs, the index shards, listing reads, the DAG
versions and the shards of a run's partition (``run_shards``)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from updraft.serialization import deserialize_dag
from updraft.serialization.model import SerializedDAG
from updraft.store import keys, run_shards
from updraft.store.blobs import Blobs
from updraft.store.config import StoreConfig
from updraft.store.encryption import KmsCipher
from updraft.store.lru import LruCache
from updraft.store.models import Item, ListIndex, RunItem, build_models

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

_I = TypeVar("_I", bound=Item)

# The threads that read a run's shards at once (botocore clients are thread-safe), kept for the process's life:
# starting a thread per shard for each whole-run read cost more than its Query in a busy worker. A process forked
# after they ran has none of them, so the child starts its own (``_forget_shard_readers``).
_readers: ThreadPoolExecutor | None = None
_readers_lock = threading.Lock()


def _shard_readers() -> ThreadPoolExecutor:
    global _readers
    with _readers_lock:
        if _readers is None:
            _readers = ThreadPoolExecutor(run_shards.MAX_SHARDS, thread_name_prefix="run-shards")
        return _readers


def _forget_shard_readers() -> None:
    global _readers, _readers_lock
    _readers, _readers_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_shard_readers)

# Serialized DAG versions kept per process (each is the whole DAG; a scheduler touches few at once).
_DAG_CACHE_SIZE = 64
# Runs whose shard count a process keeps (an int each): more than the runs a process works on at once.
_RUN_SHARDS_CACHE_SIZE = 4096


class StoreBase:
    """State of one store instance. Thread-safe: it keeps only caches of immutable facts (DAG versions, runs'
    shard counts), so one instance serves every thread of a process."""

    def __init__(self, config: StoreConfig, s3_client: S3Client | None = None,
                 kms_client: Callable[[], Any] | None = None) -> None:
        """``kms_client`` makes the KMS client on first use (the store's secrets need it only when a key is
        configured, and most invocations read none)."""
        self.config = config
        if config.kms_key_id and kms_client is None:
            raise ValueError("a store with a KMS key needs a kms_client: its secrets are never stored in clear")
        self.cipher = (KmsCipher(kms_client, config.kms_key_id, config.table_name)
                       if config.kms_key_id and kms_client is not None else None)
        self.models = build_models(config)
        self.blobs = Blobs(config, s3_client)
        self._dag_cache: LruCache[tuple[str, str], SerializedDAG] = LruCache(_DAG_CACHE_SIZE)
        self._run_shards: LruCache[tuple[str, str], int] = LruCache(_RUN_SHARDS_CACHE_SIZE)

    def get_serialized_dag(self, dag_id: str, dag_hash: str) -> SerializedDAG | None:
        """The SerializedDAG of that version, or None. Cached (the process's only cache of them): versions
        never change. Treat it as read-only, it is shared by every caller in the process."""
        cached = self._dag_cache.get((dag_id, dag_hash))
        if cached is not None:
            return cached
        V = self.models.dag_version
        try:
            item = V.get(keys.dag_pk(dag_id), keys.version_sk(dag_hash), consistent_read=True)
        except V.DoesNotExist:
            return None
        sdag = deserialize_dag(self.blobs.unpack(item.data, item.s3_key))
        self._dag_cache.put((dag_id, dag_hash), sdag)
        return sdag

    def _run_attribute(self, dag_id: str, run_id: str, name: str) -> RunItem | None:
        """The run's item with only attribute ``name`` read (strongly), or None when the run does not exist."""
        R = self.models.run
        try:
            return R.get(keys.dag_pk(dag_id), keys.run_sk(run_id), consistent_read=True, attributes_to_get=[name])
        except R.DoesNotExist:
            return None

    def remember_run_shards(self, dag_id: str, run_id: str, shards: int) -> None:
        """Keep a run's shard count as its item says (every read of a run calls this, and so does its creator)."""
        self._run_shards.put((dag_id, run_id), shards)

    def run_shard_count(self, dag_id: str, run_id: str) -> int:
        """How many shards the run's partition has (``store.run_shards``). A run that does not exist has one (it
        has no items)."""
        return self._known_run_shards(dag_id, run_id) or 1

    def _known_run_shards(self, dag_id: str, run_id: str) -> int | None:
        """The run's shard count, kept or read from its item (strongly: the run may have been created a moment
        ago); None when the run does not exist, which is not kept, as the run may be created next."""
        known = self._run_shards.get((dag_id, run_id))
        if known is not None:
            return known
        item = self._run_attribute(dag_id, run_id, "ti_shards")
        if item is None:
            return None
        shards = int(item.ti_shards or 1)
        self.remember_run_shards(dag_id, run_id, shards)
        return shards

    def ti_pk(self, dag_id: str, run_id: str, task_id: str, map_index: int) -> str:
        """The partition key of a task instance's items (itself, its recorded tries, its XComs)."""
        shards = self.run_shard_count(dag_id, run_id)
        return keys.run_shard_pk(dag_id, run_id, keys.ti_shard(task_id, map_index, shards))

    def run_pks(self, dag_id: str, run_id: str, *, deleted: bool = False) -> list[str]:
        """Every shard's partition key of a run's partition, shard 0 first. ``deleted``: the run's item may be gone
        already (a deletion resumed after a crash), and then every shard a run can have is named."""
        shards = self._known_run_shards(dag_id, run_id) or (run_shards.MAX_SHARDS if deleted else 1)
        return [keys.run_shard_pk(dag_id, run_id, i) for i in range(shards)]

    def query_run(self, model: type[_I], dag_id: str, run_id: str, prefix: str, *,
                  shard_of: tuple[str, int] | None = None, deleted: bool = False) -> list[_I]:
        """The run's items whose sort key starts with ``prefix``, strongly read, in sort key order: one Query of
        each shard (concurrently when there are several, ``deleted`` as ``run_pks``), or of the one shard of
        ``shard_of`` (a task id and map index) when the prefix names one instance."""
        if shard_of is not None:
            pks = [self.ti_pk(dag_id, run_id, *shard_of)]
        else:
            pks = self.run_pks(dag_id, run_id, deleted=deleted)

        def read(pk: str) -> list[_I]:
            return list(model.query(pk, model.sk.startswith(prefix), consistent_read=True))

        if len(pks) == 1:
            return read(pks[0])
        found = [item for items in _shard_readers().map(read, pks) for item in items]
        return sorted(found, key=lambda item: str(item.sk))

    def _shards(self) -> range:
        return range(self.config.index_shards)

    @staticmethod
    def _listed_keys(index: ListIndex[_I], list_pks: Iterable[str]) -> list[tuple[str, str]]:
        found = []
        for list_pk in list_pks:
            found += [(i.pk, i.sk) for i in index.query(list_pk)]
        return found

    @staticmethod
    def _batch_get(model: type[_I], item_keys: list[tuple[str, str]]) -> list[_I]:
        return list(model.batch_get(item_keys, consistent_read=True)) if item_keys else []
