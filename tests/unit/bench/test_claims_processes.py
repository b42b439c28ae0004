"""The claims-processes benchmark's projection onto AWS: requests at their mean latency one after another, the
invokes a pass sends INVOKE_CONCURRENCY at once, the schedulers' CPU, shared by the schedulers (bench/claims_processes.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))  # as run: its sibling latency_bench
from bench import claims_processes as bench
from updraft.local.latency import AWS
from updraft.scheduling.pass_invokes import INVOKE_CONCURRENCY


def test_the_projection_charges_requests_serially_and_invokes_at_the_pass_concurrency():
    requests = {"TransactWriteItems": 4, "Query": 2, "other": 50}  # "other" (not DynamoDB) is not charged
    projected = bench.projection(requests, invokes=100, cpu_s=0.3, width=100, schedulers=2)
    requests_s = 4 * AWS.dynamo("TransactWriteItems").mean_s + 2 * AWS.dynamo("Query").mean_s
    invokes_s = 100 * AWS.lambda_invoke_api.mean_s / INVOKE_CONCURRENCY
    assert projected["projected_claims_per_s"] == pytest.approx(200 / (requests_s + invokes_s + 0.3))
    assert projected["projected_overlapped_claims_per_s"] == pytest.approx(200 / max(requests_s + 0.3, invokes_s))
    assert projected["work_ms_per_claim"] == {"requests": round(10 * requests_s, 2),
                                              "invokes": round(10 * invokes_s, 2), "cpu": 3.0}


def test_overlapped_is_bounded_by_the_invokes_when_they_outweigh_the_claims():
    projected = bench.projection({}, invokes=800, cpu_s=0.0, width=800, schedulers=1)
    assert projected["projected_overlapped_claims_per_s"] == pytest.approx(
        INVOKE_CONCURRENCY / AWS.lambda_invoke_api.mean_s)
    assert projected["projected_claims_per_s"] == pytest.approx(projected["projected_overlapped_claims_per_s"])
