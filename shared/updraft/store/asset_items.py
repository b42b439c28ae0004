"""The asset aggregate's items (:mod:`updraft.store.assets`), declared as :mod:`updraft.store.models` declares the
others and bound to a config's table the same way, sharing that config's one pynamodb connection."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from pynamodb.attributes import JSONAttribute, NumberAttribute, UnicodeAttribute, UnicodeSetAttribute

from updraft.store.attributes import DateTimeAttribute
from updraft.store.config import StoreConfig
from updraft.store.models import Item, ListIndex, bind


class AssetItem(Item):
    """An asset or an asset alias (:mod:`updraft.store.assets`): its definition and who uses it."""

    kind = UnicodeAttribute(default="asset")  # "asset" | "alias"
    asset_id = NumberAttribute(null=True)
    name = UnicodeAttribute()
    uri = UnicodeAttribute(null=True)
    group = UnicodeAttribute(default="asset")
    extra = JSONAttribute(null=True)
    watchers = JSONAttribute(null=True)  # what its AssetWatchers watch (updraft.triggers.aws_sources)
    created_at = DateTimeAttribute(null=True)
    updated_at = DateTimeAttribute(null=True)
    # DAGs scheduled on it, and "dag_id.task_id" of the tasks with it as an outlet (ADD/DELETE: concurrent-safe)
    consumers = UnicodeSetAttribute(null=True)
    producers = UnicodeSetAttribute(null=True)
    list_pk = UnicodeAttribute(null=True)
    list_sk = UnicodeAttribute(null=True)
    list_index: ListIndex[AssetItem] = ListIndex()


class AssetEventItem(Item):
    """One asset event (Airflow's ``asset_event`` row), or a try's outlet events waiting for its success."""

    event_id = NumberAttribute(null=True)
    asset_id = NumberAttribute(null=True)
    timestamp = DateTimeAttribute(null=True)
    data = JSONAttribute(null=True)


class AssetQueueItem(Item):
    """An asset (or alias) with events a DAG has not yet been triggered by (Airflow's ``asset_dag_run_queue``)."""

    dag_id = UnicodeAttribute()
    target = UnicodeAttribute()  # "asset:<name>" | "alias:<name>"
    asset_id = NumberAttribute(null=True)
    created_at = DateTimeAttribute()
    events = UnicodeSetAttribute(null=True)  # "<asset_id>#<event_id>" of the events queued
    version = NumberAttribute(default=0)
    list_pk = UnicodeAttribute(null=True)
    list_sk = UnicodeAttribute(null=True)
    list_index: ListIndex[AssetQueueItem] = ListIndex()


class AssetPartitionItem(Item):
    """A partitioned DAG's pending run for one partition key (Airflow's ``asset_partition_dag_run`` with its
    ``partitioned_asset_key_log`` rows): :mod:`updraft.store.asset_partitions`."""

    dag_id = UnicodeAttribute()
    partition_key = UnicodeAttribute()
    created_at = DateTimeAttribute()
    logs = UnicodeSetAttribute(null=True)  # the events mapped here (store.asset_partitions.PartitionLog)
    done = UnicodeSetAttribute(null=True)  # logs a run was made of: a redelivered event never counts twice
    version = NumberAttribute(default=0)
    run_id = UnicodeAttribute(null=True)  # the claimed run, until it exists and its logs left the item
    run_after = DateTimeAttribute(null=True)
    claimed = UnicodeSetAttribute(null=True)
    list_pk = UnicodeAttribute(null=True)
    list_sk = UnicodeAttribute(null=True)
    list_index: ListIndex[AssetPartitionItem] = ListIndex()


@dataclass(frozen=True)
class AssetModels:
    asset: type[AssetItem]
    asset_event: type[AssetEventItem]
    asset_queue: type[AssetQueueItem]
    asset_partition: type[AssetPartitionItem]


@functools.cache
def asset_models(config: StoreConfig) -> AssetModels:
    """The asset item classes on ``config``'s table (cached, as ``build_models``)."""
    return AssetModels(asset=bind(AssetItem, config), asset_event=bind(AssetEventItem, config),
                       asset_queue=bind(AssetQueueItem, config), asset_partition=bind(AssetPartitionItem, config))
