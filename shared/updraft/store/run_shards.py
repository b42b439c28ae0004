"""A run's partition shards: how many partition keys its task instances (with their tries and XComs) spread over.

One partition takes ~1,000 write units a second, and a task instance's life writes ~5-7 units to its run's
partition (its claim and end are transactions, which count twice), so a run kept in one partition starts at
most ~170 tries a second. A wide run spreads its instances over ``shards`` partition keys
(``keys.run_shard_pk``, the shard of an instance from ``keys.ti_shard``); a narrow one keeps one, so reading it
stays one Query.

The count is chosen once, when the run is created, from the DAG version the run is pinned to, and stored on the
run's item (``ti_shards``). It never changes while the run exists, so every process may keep it: an item written
before runs carried a count holds every instance in shard 0 and reads as one shard. The run's other items (its
callback fences, asset outlet rows) stay in shard 0, and its ENDS counters keep a partition of their own.
"""

from __future__ import annotations

from updraft.serialization.model import SerializedDAG

# Instances per shard a DAG's width is divided by; at ~6 write units an instance, 64 instances started in the same
# second use under half of a partition's units.
INSTANCES_PER_SHARD = 64
# The most shards a run spreads over: a whole-run read is one Query per shard, made concurrently. 16 shards take
# ~2,500 starts a second, beyond what one run's limits (parallelism, pools) let start.
MAX_SHARDS = 16
# A mapped task's width is known only when it expands (Airflow caps an expansion at max_map_length, 1,024). It
# counts as a quarter of that cap: a run expanding one task to 1,024 then starts 700-900 tries a second, and a small
# expansion's whole-run reads are 4-5 Queries, not 16.
MAPPED_WIDTH = 256


def shards_for(dag: SerializedDAG) -> int:
    """The shards of a new run of ``dag``: one per ``INSTANCES_PER_SHARD`` instances it can have (a mapped task
    counting ``MAPPED_WIDTH``), at most ``MAX_SHARDS``."""
    width = sum(MAPPED_WIDTH if task.is_mapped else 1 for task in dag.tasks)
    return max(1, min(MAX_SHARDS, -(-width // INSTANCES_PER_SHARD)))
