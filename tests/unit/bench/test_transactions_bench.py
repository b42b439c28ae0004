"""The hot-limit benchmark's two designs on a small scale: every try claimed and released, every slot back, and the
request and unit counts per try that its table reports (bench/transactions_bench.py)."""

from __future__ import annotations

import pytest

from bench import transactions_bench as bench
from updraft.local.latency import AWS, LatencySource
from updraft.local.moto_server import EmbeddedAwsServer


@pytest.fixture(scope="module")
def server():
    with EmbeddedAwsServer(concurrent=True, latency=LatencySource(AWS)) as s:
        yield s


@pytest.mark.parametrize(("design", "shards", "batch", "requests", "wcu"), [
    ("today", bench.POOL_SHARDS, 1, 5.0, 5.0),  # mark, take, queue, end, release
    ("today", 1, 1, 4.0, 4.0),  # the root alone: no mark
    ("txn", 1, 1, 2.0, 8.0),  # claim and release transactions of 2 items, 2 WCU each
    ("txn", bench.POOL_SHARDS, 3, 4 / 3, (8 + 3 * 4) / 3),  # one claim of 3 instances + a shard, 3 releases
])
def test_one_claimer_claims_and_releases_every_try(server, design, shards, batch, requests, wcu):
    result = bench.run(server, design, shards, 1, 3, batch, seed=1)  # it checks every slot came back
    assert result["tries"] == 3
    assert result["requests"] == pytest.approx(requests)
    assert result["wcu"] == pytest.approx(wcu)
    assert result["conflict_rate"] == 0.0  # one claimer: nothing to conflict with
