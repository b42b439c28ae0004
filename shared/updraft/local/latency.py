"""Per-request latency as AWS would add it, for benchmarks that should show a deployed environment's timing.

moto answers in the time its Python takes, which is neither DynamoDB's nor Lambda's. A ``LatencyProfile`` draws a
delay per request from a lognormal distribution (latencies are right-skewed: most requests near the median, a
tail a few times longer), fitted to a median and a 99th percentile:

- DynamoDB: its documentation promises "single-digit millisecond" latency for requests of any size. The figures
  below sit inside that envelope and are what CloudWatch's ``SuccessfulRequestLatency`` typically shows for a
  client in the same region: reads p50 4 ms / p99 10 ms, single-item writes p50 5 ms / p99 12 ms, Query, Scan and
  batches p50 6 ms / p99 15 ms, transactions (two phases) p50 10 ms / p99 25 ms.
- Lambda: AWS publishes no latency figure for ``Invoke``. An asynchronous invoke's API call (the 202 once the
  event is queued) is taken as p50 15 ms / p99 40 ms, and the time from the queued event to the handler starting
  in a warm execution environment as p50 25 ms / p99 80 ms (the internal queue's poll plus the warm start), the
  order of magnitude commonly measured in-region. They are assumptions, named here so a reader can change them.

A transaction's items stay prepared (in the transaction, refusing conflicting requests: ``transaction_conflicts``)
for ``transaction_window`` of its latency: the time between its first item's prepare and its last item's commit,
taken as 80 % of what the client waits (the rest is the way there and back, ~1 ms each in-region); also an
assumption. None: conflicts are not emulated (a request meeting a transaction's items waits for them instead).

Benchmarks only (``bench/latency_bench.py``, ``bench/transactions_bench.py``): local mode runs without any; the
tests of transaction conflicts use short fixed latencies, to hold a transaction prepared while others meet it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

# How far the 99th percentile of a standard normal lies from its median.
Z99 = 2.3263

WRITE_OPERATIONS = frozenset({"PutItem", "UpdateItem", "DeleteItem"})
MANY_ITEM_OPERATIONS = frozenset({"Query", "Scan", "BatchWriteItem", "BatchGetItem"})
TRANSACTIONS = frozenset({"TransactWriteItems", "TransactGetItems"})


@dataclass(frozen=True)
class Lognormal:
    """A latency distribution given by its median and 99th percentile, in milliseconds."""

    p50_ms: float
    p99_ms: float

    @property
    def sigma(self) -> float:
        return math.log(self.p99_ms / self.p50_ms) / Z99

    @property
    def mean_s(self) -> float:
        """The distribution's mean, in seconds (what a benchmark's projection adds up)."""
        return math.exp(math.log(self.p50_ms) + self.sigma ** 2 / 2) / 1000.0

    def draw(self, rng: random.Random) -> float:
        """One latency, in seconds."""
        return rng.lognormvariate(math.log(self.p50_ms), self.sigma) / 1000.0


@dataclass(frozen=True)
class LatencyProfile:
    dynamo_read: Lognormal = Lognormal(4.0, 10.0)
    dynamo_write: Lognormal = Lognormal(5.0, 12.0)
    dynamo_many: Lognormal = Lognormal(6.0, 15.0)
    dynamo_transaction: Lognormal = Lognormal(10.0, 25.0)
    lambda_invoke_api: Lognormal = Lognormal(15.0, 40.0)
    lambda_event_to_start: Lognormal = Lognormal(25.0, 80.0)
    transaction_window: float | None = 0.8

    def dynamo(self, operation: str) -> Lognormal:
        """The distribution of one DynamoDB operation (table operations count as reads)."""
        if operation in TRANSACTIONS:
            return self.dynamo_transaction
        if operation in MANY_ITEM_OPERATIONS:
            return self.dynamo_many
        if operation in WRITE_OPERATIONS:
            return self.dynamo_write
        return self.dynamo_read


AWS = LatencyProfile()
PROFILES = {"aws": AWS}


class LatencySource:
    """Draws delays of one profile; its generator is seeded so two benchmark runs draw the same sequence."""

    def __init__(self, profile: LatencyProfile, seed: int = 19) -> None:
        self.profile = profile
        self._rng = random.Random(seed)

    def dynamo(self, operation: str) -> float:
        return self.profile.dynamo(operation).draw(self._rng)

    def invoke_api(self) -> float:
        return self.profile.lambda_invoke_api.draw(self._rng)

    def event_to_start(self) -> float:
        return self.profile.lambda_event_to_start.draw(self._rng)

