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
from dataclasses import dataclass, field

from bench.capacity_recorder import Charge
from bench.dynamo_units import PARTITION_RCU_PER_S, PARTITION_WCU_PER_S, dynamodb_cost_usd, lambda_cost_usd

REQUEST_MS = 6.0  # DynamoDB's single-digit-millisecond latency, plus the client's own time
OVERHEAD_MS = 40.0  # a warm invocation's own work beyond its requests
MEMORY_GB = {"worker": 2048 / 1024, "scheduler": 1769 / 1024}  # prod's settings (infra/config.py)
REFERENCE_STARTS_PER_S = 100  # the rate at which the hottest key's share of its partition is shown


@dataclass
class Figures:
    """A scenario's figures, per task start (so two sizes of a scenario can be compared and extrapolated)."""

    name: str
    tasks: int
    requests_per_task: float
    by_operation: dict[str, int]
    wcu_per_task: float
    rcu_per_task: float
    key_wcu_per_task: dict[str, float]  # the hottest keys only (enough to find the ceiling's key)
    key_rcu_per_task: dict[str, float]
    largest_item_bytes: float
    usd_per_1000_tasks_dynamodb: float
    usd_per_1000_tasks_lambda: float
    other_requests: int
    note: str = ""
    by_site: dict[str, int] = field(default_factory=dict)  # "Operation store.method < caller" -> requests

    @property
    def hottest(self) -> tuple[float, str, float, str]:
        """(load per task start as a fraction of a partition, key, its units per task, "WCU" or "RCU")."""
        loads = [(u / PARTITION_WCU_PER_S, k, u, "WCU") for k, u in self.key_wcu_per_task.items()]
        loads += [(u / PARTITION_RCU_PER_S, k, u, "RCU") for k, u in self.key_rcu_per_task.items()]
        return max(loads)

    @property
    def ceiling_starts_per_s(self) -> float:
        """Task starts per second at which the hottest key reaches its partition's limit."""
        return 1 / self.hottest[0]

    @property
    def hottest_share_at_reference(self) -> float:
        return self.hottest[0] * REFERENCE_STARTS_PER_S


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
    # Requests, not items: a batch is one request (its items are charged one by one). Control-plane calls
    # (CreateTable) cost no units and are not counted.
    counted = [c for c in charges if c.partition != "-" and c.request]
    requests_by_role = collections.Counter(c.role for c in counted)
    invocations = {"worker": tasks, "scheduler": scheduler_passes}
    gb_s = sum((OVERHEAD_MS * invocations[r] + REQUEST_MS * requests_by_role[r]) / 1000 * MEMORY_GB[r]
               for r in invocations)
    return Figures(
        name=name, tasks=tasks, requests_per_task=len(counted) / tasks,
        by_operation=dict(collections.Counter(c.operation for c in counted)),
        by_site=dict(collections.Counter(f"{c.role}: {c.operation} {c.site}" for c in counted).most_common()),
        wcu_per_task=wcu / tasks, rcu_per_task=rcu / tasks,
        key_wcu_per_task={k: u / tasks for k, u in writes.most_common(20)},
        key_rcu_per_task={k: u / tasks for k, u in reads.most_common(20)},
        largest_item_bytes=max((c.item_bytes for c in charges if c.write_units), default=0),
        usd_per_1000_tasks_dynamodb=dynamodb_cost_usd(wcu, rcu) / tasks * 1000,
        usd_per_1000_tasks_lambda=lambda_cost_usd(sum(invocations.values()), gb_s) / tasks * 1000,
        other_requests=other_requests, note=note)


def extrapolate(small: Figures, large: Figures, n_small: int, n_large: int, n_target: int, name: str) -> Figures:
    """Every per-task figure as a straight line through two sizes of the scenario, read at ``n_target``.

    Linear per task (so quadratic in total) is what the protocol predicts where the size enters: a limit item's
    size grows with its holders, and each pass and mini-scheduler call reads the run's task instances whole. A
    figure that shrinks with size is a fixed cost spread over more tasks: it is held at the larger size's value
    (an upper bound), never extended down a line.
    """
    t = (n_target - n_small) / (n_large - n_small)

    def line(a: float, b: float) -> float:
        return a + (b - a) * t if b > a else b

    def keys(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
        return {k: line(a.get(k, 0.0), b[k]) for k in b}

    return Figures(
        name=name, tasks=round(large.tasks * n_target / n_large),
        requests_per_task=line(small.requests_per_task, large.requests_per_task), by_operation={},
        wcu_per_task=line(small.wcu_per_task, large.wcu_per_task),
        rcu_per_task=line(small.rcu_per_task, large.rcu_per_task),
        key_wcu_per_task=keys(small.key_wcu_per_task, large.key_wcu_per_task),
        key_rcu_per_task=keys(small.key_rcu_per_task, large.key_rcu_per_task),
        largest_item_bytes=line(small.largest_item_bytes, large.largest_item_bytes),
        usd_per_1000_tasks_dynamodb=line(small.usd_per_1000_tasks_dynamodb, large.usd_per_1000_tasks_dynamodb),
        usd_per_1000_tasks_lambda=line(small.usd_per_1000_tasks_lambda, large.usd_per_1000_tasks_lambda),
        other_requests=0, note=f"extrapolated linearly per task from {n_small} and {n_large}")
