"""Where the store lives: one value object, so nothing about the table is fixed at import time.

Lambda handlers build it from environment variables, tests and local mode point it at moto (in-process, or a
server through ``host``), and the CDK stack passes the same names to the functions it deploys.
"""

from __future__ import annotations

from dataclasses import dataclass

from updraft.resources import STORE_PREFIX


@dataclass(frozen=True)
class StoreConfig:
    table_name: str
    region: str
    # A DynamoDB endpoint URL (moto server, DynamoDB Local); None means the region's AWS endpoint, which is
    # also what in-process ``mock_aws`` intercepts.
    host: str | None = None
    # Write shards of the sparse work indexes (active runs, due DAGs, listings). Readers query every shard, so
    # changing it on a live table orphans index entries written under the old count until they are rewritten.
    index_shards: int = 4
    # Bucket for values too big for a DynamoDB item (serialized DAG versions, XComs); None disables them.
    s3_bucket: str | None = None
    # Compressed size above which a value goes to S3: DynamoDB items stop at 400 KB including the other
    # attributes and their names.
    large_item_bytes: int = 350_000
    # Prefix of the S3 keys the store writes; kept away from ``dags/`` so the parser never sees them.
    s3_prefix: str = STORE_PREFIX
    # The environment's KMS key: variables' values and connections' secrets are stored encrypted with it. None
    # (local mode without one, tests) stores them as written, protected only by the table's own encryption.
    kms_key_id: str | None = None

    def __post_init__(self) -> None:
        if self.index_shards < 1:
            raise ValueError("index_shards must be at least 1")
