"""The table's shape as plain data, and ``create_table`` built from it.

Tests, local mode and the CDK construct must create exactly the same table, so the key schema and the
indexes are written down once here (strings and tuples only: the CDK app imports this without pynamodb or
boto3) and every consumer derives its definition from :data:`TABLE`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

    from updraft.store.config import StoreConfig

STRING = "S"


@dataclass(frozen=True)
class KeyAttr:
    name: str
    type: str = STRING


@dataclass(frozen=True)
class IndexSpec:
    name: str
    partition_key: KeyAttr
    sort_key: KeyAttr
    projection: str  # "ALL" | "KEYS_ONLY"
    purpose: str = ""


@dataclass(frozen=True)
class TableSpec:
    partition_key: KeyAttr
    sort_key: KeyAttr
    global_indexes: tuple[IndexSpec, ...] = ()
    local_indexes: tuple[IndexSpec, ...] = ()
    billing_mode: str = "PAY_PER_REQUEST"
    ttl_attribute: str | None = None  # epoch seconds after which DynamoDB deletes the item (in the background)

    def key_attributes(self) -> list[KeyAttr]:
        """Every attribute that is a key of the table or of an index (DynamoDB's AttributeDefinitions)."""
        seen: dict[str, KeyAttr] = {}
        for attr in (self.partition_key, self.sort_key):
            seen[attr.name] = attr
        for index in (*self.global_indexes, *self.local_indexes):
            seen.setdefault(index.partition_key.name, index.partition_key)
            seen.setdefault(index.sort_key.name, index.sort_key)
        return list(seen.values())


# Index names are part of the contract with infra/: renaming one on a live table means a new index build.
LIST_INDEX = "list_index"
ACTIVE_RUNS_INDEX = "active_runs"
DUE_DAGS_INDEX = "due_dags"
RUNS_BY_DATE_INDEX = "runs_by_date"
WAITING_INDEX = "waiting_tis"
# The TTL attribute: task state keys with a retention (updraft.store.state_stores) carry it.
TTL_ATTRIBUTE = "expires"

TABLE = TableSpec(
    partition_key=KeyAttr("pk"),
    sort_key=KeyAttr("sk"),
    global_indexes=(
        IndexSpec(
            LIST_INDEX, KeyAttr("list_pk"), KeyAttr("list_sk"), "KEYS_ONLY",
            "Listings for the API (DAG metas, pools, files with import errors). Keys only, so the frequent "
            "writes to those items (next-run advances) never write to this index.",
        ),
        IndexSpec(
            ACTIVE_RUNS_INDEX, KeyAttr("active_pk"), KeyAttr("active_sk"), "ALL",
            "Sparse and sharded: only queued/running runs carry the keys, spread over index_shards.",
        ),
        IndexSpec(
            DUE_DAGS_INDEX, KeyAttr("due_pk"), KeyAttr("due_sk"), "ALL",
            "Sparse and sharded: only active, unpaused DAGs with a next run carry the keys; sort = run_after.",
        ),
        IndexSpec(
            WAITING_INDEX, KeyAttr("waiting_pk"), KeyAttr("waiting_sk"), "KEYS_ONLY",
            "Sparse: only scheduled task instances a claim refused (a full limit) carry the keys, by run in "
            "claim order, so a try's end in a waiting run finds the next ones without reading the run.",
        ),
    ),
    local_indexes=(
        IndexSpec(
            RUNS_BY_DATE_INDEX, KeyAttr("pk"), KeyAttr("run_date_sk"), "ALL",
            "A DAG's runs by logical date, strongly consistent (list_runs, previous_run).",
        ),
    ),
    ttl_attribute=TTL_ATTRIBUTE,
)


def create_table_kwargs(table_name: str, spec: TableSpec = TABLE) -> dict[str, Any]:
    """DynamoDB CreateTable arguments for ``spec`` (PAY_PER_REQUEST, so no throughput anywhere)."""

    def keys(pk: KeyAttr, sk: KeyAttr) -> list[dict[str, str]]:
        return [{"AttributeName": pk.name, "KeyType": "HASH"}, {"AttributeName": sk.name, "KeyType": "RANGE"}]

    def index(ix: IndexSpec) -> dict[str, Any]:
        return {"IndexName": ix.name, "KeySchema": keys(ix.partition_key, ix.sort_key),
                "Projection": {"ProjectionType": ix.projection}}

    kwargs: dict[str, Any] = {
        "TableName": table_name,
        "KeySchema": keys(spec.partition_key, spec.sort_key),
        "AttributeDefinitions": [{"AttributeName": a.name, "AttributeType": a.type} for a in spec.key_attributes()],
        "BillingMode": spec.billing_mode,
    }
    if spec.global_indexes:
        kwargs["GlobalSecondaryIndexes"] = [index(ix) for ix in spec.global_indexes]
    if spec.local_indexes:
        kwargs["LocalSecondaryIndexes"] = [index(ix) for ix in spec.local_indexes]
    return kwargs


def create_table(config: StoreConfig, *, client: DynamoDBClient | None = None, wait: bool = True) -> bool:
    """Create the table if it does not exist; True if this call created it.

    Idempotent so that local mode and tests can call it on every start. An existing table gains the global
    indexes the spec added since it was created (``add_missing_indexes``): local mode keeps its table across
    restarts and upgrades, and a store querying an index the table lacks would fail. A deployed table's indexes are
    the CDK stack's job.
    """
    if client is None:
        import boto3

        client = boto3.client("dynamodb", region_name=config.region, endpoint_url=config.host)
    status = None
    try:
        status = client.create_table(**create_table_kwargs(config.table_name))["TableDescription"]["TableStatus"]
        created = True
    except client.exceptions.ResourceInUseException:
        created = False
    if (wait or created) and status != "ACTIVE":  # DynamoDB answers CREATING; moto makes it ACTIVE at once
        for _ in range(600):
            status = client.describe_table(TableName=config.table_name)["Table"]["TableStatus"]
            if status == "ACTIVE":
                break
            time.sleep(0.1)
    if not created:
        add_missing_indexes(client, config.table_name)
    if created and TABLE.ttl_attribute:
        client.update_time_to_live(TableName=config.table_name, TimeToLiveSpecification={
            "Enabled": True, "AttributeName": TABLE.ttl_attribute})
    return created


def add_missing_indexes(client: DynamoDBClient, table_name: str, spec: TableSpec = TABLE) -> list[str]:
    """Create the spec's global indexes the table lacks, one UpdateTable each (DynamoDB builds one new index per
    call), and return their names. Indexes are only added, never changed or dropped: an index the spec no longer
    names may still be read by a running older version."""
    kwargs = create_table_kwargs(table_name, spec)
    table = client.describe_table(TableName=table_name)["Table"]
    present = {ix["IndexName"] for ix in table.get("GlobalSecondaryIndexes", [])}
    added = []
    for index in kwargs.get("GlobalSecondaryIndexes", []):
        if index["IndexName"] in present:
            continue
        key_names = {k["AttributeName"] for k in index["KeySchema"]}
        client.update_table(
            TableName=table_name,
            AttributeDefinitions=[a for a in kwargs["AttributeDefinitions"] if a["AttributeName"] in key_names],
            GlobalSecondaryIndexUpdates=[{"Create": index}])
        added.append(index["IndexName"])
    return added
