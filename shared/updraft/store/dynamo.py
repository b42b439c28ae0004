"""``DynamoStore``: the :class:`~updraft.store.api.Store` contract on one DynamoDB table, through pynamodb.

It is the one object callers get, composed of one class per aggregate (:mod:`~updraft.store.dags`,
:mod:`~updraft.store.files`, :mod:`~updraft.store.runs`, :mod:`~updraft.store.task_instances`,
:mod:`~updraft.store.pools`, :mod:`~updraft.store.xcoms`, :mod:`~updraft.store.event_logs`,
:mod:`~updraft.store.heartbeats`, :mod:`~updraft.store.dag_deletion`, :mod:`~updraft.store.backfills`,
:mod:`~updraft.store.long_tasks`, :mod:`~updraft.store.state_stores`, :mod:`~updraft.store.waiting`), each with its
named conditional writes.

Every rule is one conditional write, so its correctness follows from DynamoDB's single-item atomicity and
holds with any number of concurrent callers; a lost race comes back as ``False`` (:mod:`updraft.store.writes`).
Index reads only *find* candidates; anything a caller decides on is re-read strongly or guarded by a condition.
The access patterns and their costs are listed in :mod:`updraft.store`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from updraft.store.api import Store
from updraft.store.asset_partitions import AssetPartitionStore
from updraft.store.assets import AssetStore
from updraft.store.backfills import BackfillStore
from updraft.store.config import StoreConfig
from updraft.store.connections import ConnectionStore
from updraft.store.dag_deletion import DagDeletionStore
from updraft.store.dags import DagStore
from updraft.store.event_logs import EventLogStore
from updraft.store.files import FileStore
from updraft.store.heartbeats import HeartbeatStore
from updraft.store.long_tasks import LongTaskStore
from updraft.store.plugins import PluginStore
from updraft.store.pools import PoolStore
from updraft.store.runs import RunStore
from updraft.store.state_stores import StateStore
from updraft.store.task_instances import TaskInstanceStore
from updraft.store.variables import VariableStore
from updraft.store.waiting import WaitingStore
from updraft.store.xcoms import XComStore

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


class DynamoStore(AssetStore, AssetPartitionStore, DagStore, FileStore, RunStore, TaskInstanceStore, PoolStore,
                  XComStore, VariableStore, ConnectionStore, EventLogStore, HeartbeatStore,
                  DagDeletionStore, BackfillStore, LongTaskStore, StateStore, WaitingStore, PluginStore):
    """The store on DynamoDB. Thread-safe: it keeps only caches of immutable facts (versions, limit items
    known to exist), so one instance serves every thread of a process."""


def make_store(config: StoreConfig, s3_client: S3Client | None = None,
               kms_client: Callable[[], Any] | None = None) -> Store:
    """The store on DynamoDB as callers see it, the ``Store`` contract (``StoreBase`` says what the clients are
    for). Typed so that mypy fails here when ``DynamoStore`` stops satisfying ``Store`` or any of its
    aggregates' protocols."""
    return DynamoStore(config, s3_client=s3_client, kms_client=kms_client)
