"""What every aggregate of the store shares: its config, models, blobs, the index shards and listing reads."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from updraft.serialization.model import SerializedDAG
from updraft.store.blobs import Blobs
from updraft.store.config import StoreConfig
from updraft.store.encryption import KmsCipher
from updraft.store.lru import LruCache
from updraft.store.models import Item, ListIndex, build_models

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

_I = TypeVar("_I", bound=Item)

# Serialized DAG versions kept per process (each is the whole DAG; a scheduler touches few at once).
_DAG_CACHE_SIZE = 64


class StoreBase:
    """State of one store instance. Thread-safe: it keeps only caches of immutable facts (DAG versions),
    so one instance serves every thread of a process."""

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
