"""From a scenario's recorded requests to its capacity figures: units per task, the hottest partition key, the
ceiling in task starts per second, and dollars per 1,000 tasks (issue 19).

The ceiling assumes the scenario is replayed at a steady rate of T task starts per second with the same mix of
requests: key k then receives (units on k / tasks) x T units per second, and the first key to reach a partition's
1,000 WCU/s or 3,000 RCU/s sets T. One item never spreads over partitions, so for a single-item key (a limit, a
DAG row) this is a hard ceiling; an item collection (a run's task instances) can be split by DynamoDB's
split-for-heat, so for those it is where throttling starts until the split happens.

Lambda is modeled, not measured: every try is one worker invocation, every scheduler pass one scheduler
invocation, and an invocation lasts ``OVERHEAD_MS`` plus ``REQUEST_MS`` per DynamoDB request it makes (no-op
tasks: the task's own run time is the user's, not the orchestrator's).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

from bench.capacity_recorder import Charge
from bench.dynamo_units import PARTITION_RCU_PER_S, PARTITION_WCU_PER_S, dynamodb_cost_usd, lambda_cost_usd

REQUEST_MS = 6.0  # DynamoDB's single-digit-millisecond latency, plus the client's own time
OVERHEAD_MS = 40.0  # a warm invocation's own work beyond its requests
MEMORY_GB = {"worker": 2048 / 1024, "scheduler": 1769 / 1024}  # prod's settings (infra/config.py)
REFERENCE_STARTS_PER_S = 100  # the rate at which the hottest key's share of its partition is shown


@dataclass
class Figures:
    name: str
    tasks: int
    requests: int
    by_operation: dict[str, int]
    wcu: float
    rcu: float
    hottest_key: str
    hottest_units_per_task: float
    hottest_kind: str  # "WCU" or "RCU"
    ceiling_starts_per_s: float
    largest_item_bytes: int
    usd_per_1000_tasks_dynamodb: float
    usd_per_1000_tasks_lambda: float
    other_requests: int
    note: str = ""

    @property
    def hottest_share_at_reference(self) -> float:
        limit = PARTITION_WCU_PER_S if self.hottest_kind == "WCU" else PARTITION_RCU_PER_S
        return self.hottest_units_per_task * REFERENCE_STARTS_PER_S / limit


def key_units(charges: list[Charge]) -> tuple[collections.Counter[str], collections.Counter[str]]:
    """Write and read units per partition key (a global index's keys are named ``index:value``)."""
    writes: collections.Counter[str] = collections.Counter()
    reads: collections.Counter[str] = collections.Counter()
    for charge in charges:
        if charge.write_units:
            writes[charge.partition] += charge.write_units
        for _, partition, units in charge.index_units:
            writes[partition] += units
        if charge.read_units:
            reads[charge.partition] += charge.read_units
    return writes, reads


def figures(name: str, charges: list[Charge], *, tasks: int, scheduler_passes: int, other_requests: int = 0,
            note: str = "") -> Figures:
    """The scenario's figures from its charges (``tasks`` = tries started)."""
    writes, reads = key_units(charges)
    wcu = sum(writes.values())
    rcu = sum(reads.values())
    # Each key's load per task start, as a fraction of what its partition can serve per second.
    loads = [(units / tasks / PARTITION_WCU_PER_S, key, units / tasks, "WCU") for key, units in writes.items()]
    loads += [(units / tasks / PARTITION_RCU_PER_S, key, units / tasks, "RCU") for key, units in reads.items()]
    worst, hottest, per_task, kind = max(loads)
    requests_by_role = collections.Counter(c.role for c in charges if c.partition != "-")
    invocations = {"worker": tasks, "scheduler": scheduler_passes}
    gb_s = sum((OVERHEAD_MS * invocations[r] + REQUEST_MS * requests_by_role[r]) / 1000 * MEMORY_GB[r]
               for r in invocations)
    return Figures(
        name=name, tasks=tasks, requests=sum(1 for c in charges if c.partition != "-"),
        by_operation=dict(collections.Counter(c.operation for c in charges if c.partition != "-")),
        wcu=wcu, rcu=rcu, hottest_key=hottest, hottest_units_per_task=per_task, hottest_kind=kind,
        ceiling_starts_per_s=1 / worst,
        largest_item_bytes=max((c.item_bytes for c in charges if c.write_units), default=0),
        usd_per_1000_tasks_dynamodb=dynamodb_cost_usd(wcu, rcu) / tasks * 1000,
        usd_per_1000_tasks_lambda=lambda_cost_usd(sum(invocations.values()), gb_s) / tasks * 1000,
        other_requests=other_requests, note=note)
