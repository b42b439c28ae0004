"""pynamodb models of the store's items, built per :class:`StoreConfig` by :func:`build_models`.

pynamodb fixes a model's table, region and endpoint on its ``Meta`` class, so module-level models would pin
one table for the whole process. The factory builds (and caches) one set of classes per config instead: a
Lambda, a local-mode process talking to a moto server and a test talking to in-process moto each get models
bound to their own table, and nothing connects to AWS at import time.

Every item type shares the table's ``pk``/``sk``; which attributes an item carries (and so which sparse
index it appears in) is decided by the aggregate module that writes it.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pynamodb.attributes import (
    BinaryAttribute,
    BooleanAttribute,
    JSONAttribute,
    ListAttribute,
    NumberAttribute,
    UnicodeAttribute,
)
from pynamodb.connection.base import Connection
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex, KeysOnlyProjection, LocalSecondaryIndex
from pynamodb.models import MetaProtocol, Model

from updraft.aws_clients import MAX_ATTEMPTS, user_agent_config
from updraft.store.attributes import DateTimeAttribute
from updraft.store.config import StoreConfig
from updraft.store.tables import (
    ACTIVE_RUNS_INDEX,
    DUE_DAGS_INDEX,
    LIST_INDEX,
    RUNS_BY_DATE_INDEX,
    TABLE,
    IndexSpec,
    TableSpec,
)

if TYPE_CHECKING:
    from botocore.session import Session

_M = TypeVar("_M", bound="Item")


def _meta(config: StoreConfig) -> MetaProtocol:
    # A fresh class per model: pynamodb writes defaults onto Meta, so models must not share one. Cast because
    # pynamodb's MetaProtocol declares as required the fields (timeouts, retries, credentials) that its
    # MetaModel fills in on this class when the model is defined.
    return cast(MetaProtocol, type("Meta", (), {
        "table_name": config.table_name,
        "region": config.region,
        "host": config.host,
        "billing_mode": "PAY_PER_REQUEST",
        # pynamodb's client retries in botocore's standard mode with 1 + this many attempts: as many as every
        # other client of Updraft (updraft.aws_clients), throttling included.
        "max_retry_attempts": MAX_ATTEMPTS - 1,
    }))


# pynamodb's Index.__init_subclass__ carries no annotations, so defining an index is an "untyped call" to
# strict mypy. And ListAttribute's stub types ``of`` as the element's value
# type (str) while it takes the element's attribute class (UnicodeAttribute): a list of strings is declared
# ListAttribute[str], so reads are list[str], and the ``of`` argument is ignored for arg-type. The ignores below
# are those, and only those.
class ListIndex(GlobalSecondaryIndex[_M]):  # type: ignore[no-untyped-call]
    """Keys-only listing shards (DAGs, pools, files with import errors); shared by the models listed in it."""

    class Meta:
        index_name = LIST_INDEX
        projection = KeysOnlyProjection()

    list_pk = UnicodeAttribute(hash_key=True)
    list_sk = UnicodeAttribute(range_key=True)


class DueDagsIndex(GlobalSecondaryIndex["DagMetaItem"]):  # type: ignore[no-untyped-call]
    class Meta:
        index_name = DUE_DAGS_INDEX
        projection = AllProjection()

    due_pk = UnicodeAttribute(hash_key=True)
    due_sk = UnicodeAttribute(range_key=True)


class ActiveRunsIndex(GlobalSecondaryIndex["RunItem"]):  # type: ignore[no-untyped-call]
    class Meta:
        index_name = ACTIVE_RUNS_INDEX
        projection = AllProjection()

    active_pk = UnicodeAttribute(hash_key=True)
    active_sk = UnicodeAttribute(range_key=True)


class RunsByDateIndex(LocalSecondaryIndex["RunItem"]):  # type: ignore[no-untyped-call]
    class Meta:
        index_name = RUNS_BY_DATE_INDEX
        projection = AllProjection()

    pk = UnicodeAttribute(hash_key=True)
    run_date_sk = UnicodeAttribute(range_key=True)


class Item(Model):
    """What every item of the table has: the table's keys."""

    pk = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)


# The item types, without a table: :func:`build_models` binds each to a config's table by subclassing it with a
# ``Meta``, and those subclasses are what the store uses (pynamodb's MetaModel copies the indexes onto them, each
# bound to its subclass). Declared here so the store's code is checked against the attributes it reads.
class DagMetaItem(Item):
    dag_id = UnicodeAttribute()
    relative_fileloc = UnicodeAttribute()
    dag_hash = UnicodeAttribute()
    file_version = UnicodeAttribute(null=True)
    is_paused = BooleanAttribute(default=True)
    is_active = BooleanAttribute(default=True)
    max_active_runs = NumberAttribute(default=16)
    max_active_tasks = NumberAttribute(default=16)
    timetable_summary = UnicodeAttribute(null=True)
    tags: ListAttribute[str] = ListAttribute(of=UnicodeAttribute, default=list)  # type: ignore[arg-type]
    owners = UnicodeAttribute(default="airflow")
    next_dagrun_logical_date = DateTimeAttribute(null=True)
    next_dagrun_data_interval_start = DateTimeAttribute(null=True)
    next_dagrun_data_interval_end = DateTimeAttribute(null=True)
    next_dagrun_run_after = DateTimeAttribute(null=True)
    last_automated_data_interval_start = DateTimeAttribute(null=True)
    last_automated_data_interval_end = DateTimeAttribute(null=True)
    # Hash of what the first next run depends on (timetable, start/end dates, catchup).
    schedule_key = UnicodeAttribute(null=True)
    catchup = BooleanAttribute(default=False)
    updated_at = DateTimeAttribute(null=True)
    # A custom timetable's runs ahead, as the parser evaluated them (updraft.timetables.evaluated.Horizon).
    timetable_horizon = JSONAttribute(null=True)
    list_pk = UnicodeAttribute(null=True)
    list_sk = UnicodeAttribute(null=True)
    due_pk = UnicodeAttribute(null=True)
    due_sk = UnicodeAttribute(null=True)
    list_index: ListIndex[DagMetaItem] = ListIndex()
    due_index = DueDagsIndex()


class DagVersionItem(Item):
    dag_id = UnicodeAttribute()
    dag_hash = UnicodeAttribute()
    data = BinaryAttribute(null=True, legacy_encoding=False)  # gzip of canonical JSON
    s3_key = UnicodeAttribute(null=True)  # set instead of data above large_item_bytes
    size = NumberAttribute(default=0)  # uncompressed bytes
    created_at = DateTimeAttribute(null=True)


class RunItem(Item):
    dag_id = UnicodeAttribute()
    run_id = UnicodeAttribute()
    run_type = UnicodeAttribute()
    dag_hash = UnicodeAttribute()
    state = UnicodeAttribute()
    logical_date = DateTimeAttribute(null=True)
    data_interval_start = DateTimeAttribute(null=True)
    data_interval_end = DateTimeAttribute(null=True)
    run_after = DateTimeAttribute(null=True)
    conf = JSONAttribute(null=True)
    queued_at = DateTimeAttribute(null=True)
    start_date = DateTimeAttribute(null=True)
    end_date = DateTimeAttribute(null=True)
    note = UnicodeAttribute(null=True)
    partition_key = UnicodeAttribute(null=True)
    partition_date = DateTimeAttribute(null=True)
    triggered_by = UnicodeAttribute(null=True)
    triggering_user_name = UnicodeAttribute(null=True)
    run_date_sk = UnicodeAttribute(null=True)
    active_pk = UnicodeAttribute(null=True)
    active_sk = UnicodeAttribute(null=True)
    write_token = UnicodeAttribute(null=True)  # the last state write's (store.writes.write_token: lost acks)
    ticket = UnicodeAttribute(null=True)  # the run limit's slot the run holds (``updraft.limits``' encoded ticket)
    ti_shards = NumberAttribute(null=True)  # its partition's shards (``store.run_shards``); absent: one
    by_date = RunsByDateIndex()
    active_index = ActiveRunsIndex()


class TaskInstanceItem(Item):
    dag_id = UnicodeAttribute()
    run_id = UnicodeAttribute()
    task_id = UnicodeAttribute()
    map_index = NumberAttribute(default=-1)
    state = UnicodeAttribute(null=True)
    try_number = NumberAttribute(default=0)
    try_id = UnicodeAttribute(null=True)
    pool = UnicodeAttribute(default="default_pool")
    pool_slots = NumberAttribute(default=1)
    priority_weight = NumberAttribute(default=1)
    executor = UnicodeAttribute(default="lambda")
    queued_at = DateTimeAttribute(null=True)
    start_date = DateTimeAttribute(null=True)
    end_date = DateTimeAttribute(null=True)
    next_retry_at = DateTimeAttribute(null=True)
    lease_expires_at = DateTimeAttribute(null=True)
    ticket = UnicodeAttribute(null=True)  # the slots the try holds (``updraft.limits``' encoded ticket)
    hostname = UnicodeAttribute(null=True)
    xcom_length = NumberAttribute(null=True)
    note = UnicodeAttribute(null=True)
    blocked_reason = UnicodeAttribute(null=True)
    # Set once a clear extended the instance's retries (Airflow's max_tries); absent: the task's retries.
    max_tries = NumberAttribute(null=True)
    # The current try's rendered template fields (redacted, each truncated, the whole within RENDERED_FIELDS_BUDGET).
    rendered_fields = JSONAttribute(null=True)
    # A deferred try's trigger and resume point (``TaskInstance.trigger`` / ``next_method`` / ``next_kwargs``).
    trigger = JSONAttribute(null=True)
    next_method = UnicodeAttribute(null=True)
    next_kwargs = JSONAttribute(null=True)
    # A reschedule-mode sensor's reschedules in the current try (TaskInstance.reschedule_count and the next two).
    reschedule_count = NumberAttribute(null=True)
    first_reschedule_date = DateTimeAttribute(null=True)
    rescheduled_try_id = UnicodeAttribute(null=True)
    hitl = JSONAttribute(null=True)  # a Human-in-the-loop request and response (``TaskInstance.hitl``)
    usage = JSONAttribute(null=True)  # what the try used (``TaskInstance.usage``: ``model.usage``)
    write_token = UnicodeAttribute(null=True)  # the last state write's (store.writes.write_token: lost acks)
    # Set while the instance is scheduled and a claim refused it (``store.waiting``): the keys of its run's
    # waiting index (``tables.WAITING_INDEX``, keys only).
    waiting_pk = UnicodeAttribute(null=True)
    waiting_sk = UnicodeAttribute(null=True)


class LimitItem(Item):
    """A pool's record, in its limit's partition (``store/pools.py``; the limit's counters are
    ``updraft.limits``' items beside it)."""

    limit = NumberAttribute(null=True)  # the pool's slots (-1: unlimited)
    pool_name = UnicodeAttribute(null=True)
    include_deferred = BooleanAttribute(null=True)  # deferred tasks keep their slot (absent: False)
    description = UnicodeAttribute(null=True)
    list_pk = UnicodeAttribute(null=True)
    list_sk = UnicodeAttribute(null=True)
    list_index: ListIndex[LimitItem] = ListIndex()


class FileItem(Item):
    relative_path = UnicodeAttribute()
    file_hash = UnicodeAttribute(null=True)
    file_version = UnicodeAttribute(null=True)
    # the DAGs this file owns
    dag_ids: ListAttribute[str] = ListAttribute(of=UnicodeAttribute, default=list)  # type: ignore[arg-type]
    import_errors = JSONAttribute(null=True)
    parsed_at = DateTimeAttribute(null=True)
    parse_failures = NumberAttribute(null=True)  # handlings of ``failed_version`` that failed (Updraft's own)
    failed_version = UnicodeAttribute(null=True)
    list_pk = UnicodeAttribute(null=True)
    list_sk = UnicodeAttribute(null=True)
    list_index: ListIndex[FileItem] = ListIndex()


class XComItem(Item):
    dag_id = UnicodeAttribute()
    run_id = UnicodeAttribute()
    task_id = UnicodeAttribute()
    map_index = NumberAttribute(default=-1)
    key = UnicodeAttribute()
    data = BinaryAttribute(null=True, legacy_encoding=False)  # gzip of the JSON value
    s3_key = UnicodeAttribute(null=True)
    created_at = DateTimeAttribute(null=True)
    # The value as the API and UI show it (secrets masked), kept only where masking changed it.
    shown_data = BinaryAttribute(null=True, legacy_encoding=False)
    shown_s3_key = UnicodeAttribute(null=True)


class VariableItem(Item):
    key = UnicodeAttribute()
    # The value, encrypted with the environment's KMS key when it has one (``encrypted``), else as written.
    value = BinaryAttribute(null=True, legacy_encoding=False)
    encrypted = BooleanAttribute(default=False)
    description = UnicodeAttribute(null=True)
    list_pk = UnicodeAttribute(null=True)
    list_sk = UnicodeAttribute(null=True)
    list_index: ListIndex[VariableItem] = ListIndex()


class ConnectionItem(Item):
    conn_id = UnicodeAttribute()
    conn_type = UnicodeAttribute(null=True)
    description = UnicodeAttribute(null=True)
    host = UnicodeAttribute(null=True)
    schema = UnicodeAttribute(null=True)
    login = UnicodeAttribute(null=True)
    port = NumberAttribute(null=True)
    # ``{"password": ..., "extra": ...}`` as JSON, encrypted like a variable's value: the fields that hold secrets.
    secret = BinaryAttribute(null=True, legacy_encoding=False)
    encrypted = BooleanAttribute(default=False)
    list_pk = UnicodeAttribute(null=True)
    list_sk = UnicodeAttribute(null=True)
    list_index: ListIndex[ConnectionItem] = ListIndex()


class EventLogItem(Item):
    """One change made through the API (:mod:`updraft.store.event_logs`)."""

    event_log_id = NumberAttribute()
    when = DateTimeAttribute()
    event = UnicodeAttribute()
    owner = UnicodeAttribute(null=True)
    dag_id = UnicodeAttribute(null=True)
    task_id = UnicodeAttribute(null=True)
    run_id = UnicodeAttribute(null=True)
    map_index = NumberAttribute(null=True)
    try_number = NumberAttribute(null=True)
    logical_date = DateTimeAttribute(null=True)
    extra = UnicodeAttribute(null=True)  # JSON text, sensitive values masked


class HeartbeatItem(Item):
    """A component's latest heartbeat (:mod:`updraft.store.heartbeats`)."""

    component = UnicodeAttribute()
    at = DateTimeAttribute()


@dataclass(frozen=True)
class Models:
    """One config's model classes: each a subclass of the item type above, bound to that config's table."""

    dag_meta: type[DagMetaItem]
    dag_version: type[DagVersionItem]
    run: type[RunItem]
    task_instance: type[TaskInstanceItem]
    limit: type[LimitItem]
    file: type[FileItem]
    xcom: type[XComItem]
    variable: type[VariableItem]
    connection: type[ConnectionItem]
    event_log: type[EventLogItem]
    heartbeat: type[HeartbeatItem]


def _bound(item_type: type[_M], config: StoreConfig) -> type[_M]:
    """``item_type`` on ``config``'s table (named as the item type, so errors and reprs read the same)."""
    return type(item_type.__name__, (item_type,), {"Meta": _meta(config), "__module__": __name__})


def bind(item_type: type[_M], config: StoreConfig) -> type[_M]:
    """``item_type`` on ``config``'s table, on the one connection every model of the table shares: for the item
    types an aggregate declares beside its own code (assets, backfills, long tasks, plugins). Callers cache it."""
    model = _bound(item_type, config)
    model._connection = build_models(config).dag_meta._connection
    return model


@functools.cache
def build_models(config: StoreConfig) -> Models:
    """The model classes bound to ``config``'s table (cached: pynamodb keeps a connection per class)."""
    models = Models(dag_meta=_bound(DagMetaItem, config), dag_version=_bound(DagVersionItem, config),
                    run=_bound(RunItem, config), task_instance=_bound(TaskInstanceItem, config),
                    limit=_bound(LimitItem, config), file=_bound(FileItem, config), xcom=_bound(XComItem, config),
                    variable=_bound(VariableItem, config), connection=_bound(ConnectionItem, config),
                    event_log=_bound(EventLogItem, config), heartbeat=_bound(HeartbeatItem, config))
    _share_connection(config, models)
    return models


class _Connection(Connection):
    """pynamodb's connection, its botocore client built with Updraft's fixed user agent (``aws_clients``).

    pynamodb builds the client lazily, from the session of the thread that sends the first request and with a
    ``Config`` of its own, which botocore merges over that session's default client config: each session this
    connection hands out gets the user agent as its default."""

    @property
    def session(self) -> Session:
        session = super().session
        if session.get_default_client_config() is None:
            session.set_default_client_config(user_agent_config())
        return session


def _share_connection(config: StoreConfig, models: Models) -> None:
    """Give every model one pynamodb connection, so a process creates one botocore client per table.

    Left alone, pynamodb builds a connection per model class, each with its own botocore session that
    re-reads the endpoint and service JSON: seven of them on a Lambda cold start, and again in every thread.
    The connection is still lazy (nothing is created until the first request). Its table description comes
    from the shared spec, so it knows every index any model queries.
    """
    from pynamodb.connection import TableConnection
    from pynamodb.connection.base import MetaTable

    def key_schema(index: TableSpec | IndexSpec) -> list[dict[str, str]]:
        return [{"AttributeName": index.partition_key.name, "KeyType": "HASH"},
                {"AttributeName": index.sort_key.name, "KeyType": "RANGE"}]

    meta_table = MetaTable({
        "TableName": config.table_name,
        "KeySchema": key_schema(TABLE),
        "AttributeDefinitions": [{"AttributeName": a.name, "AttributeType": a.type} for a in TABLE.key_attributes()],
        "GlobalSecondaryIndexes": [{"IndexName": ix.name, "KeySchema": key_schema(ix)} for ix in TABLE.global_indexes],
        "LocalSecondaryIndexes": [{"IndexName": ix.name, "KeySchema": key_schema(ix)} for ix in TABLE.local_indexes],
    })
    meta = models.dag_meta.Meta
    settings: dict[str, Any] = {
        "region": config.region, "host": config.host, "connect_timeout_seconds": meta.connect_timeout_seconds,
        "read_timeout_seconds": meta.read_timeout_seconds, "max_retry_attempts": meta.max_retry_attempts,
        "max_pool_connections": meta.max_pool_connections, "extra_headers": meta.extra_headers}
    connection = TableConnection(config.table_name, **settings)
    connection.connection = _Connection(**settings)  # the same connection, with Updraft's user agent
    connection.connection.add_meta_table(meta_table)
    for model in dataclasses.astuple(models):
        model._connection = connection
