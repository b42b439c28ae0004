"""A limit of 1,000 slots alone, charged by DynamoDB's rules (issue 19's "limits that stay small").

Every try takes a slot of ``parallelism`` and of ``default_pool`` at its claim and gives both back at its end, so
the two limit items were the hottest keys of every busy scenario. This replays that on one limit directly through
the store (no scheduler, so it runs at the issue's full size on moto): ``--holders`` tries take a slot of a limit
of that size, in waves (``--wave`` at a time, as a claim pass does, all released before the next wave), and the
recorded requests are charged as ``capacity_bench.py`` charges them. Prints, per take + release: requests, WCU and
RCU, the hottest key, its share of a partition at 100 starts/s, and the ceiling in task starts per second.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "shared")]
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")

from bench.capacity_model import REFERENCE_STARTS_PER_S, figures  # noqa: E402
from bench.capacity_recorder import CapacityRecorder  # noqa: E402

NOW = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--holders", type=int, default=1000, help="the limit's size and the tries that fill it")
    parser.add_argument("--rounds", type=int, default=2, help="times the limit is filled and emptied")
    args = parser.parse_args()

    from moto import mock_aws

    from tests.functional.scheduling.harness import make_store
    from updraft.local import moto_speedups
    from updraft.model.limits import PARALLELISM_LIMIT
    from updraft.model.records import TIKey

    moto_speedups.apply()
    n = args.holders
    with mock_aws(), CapacityRecorder().recording() as recorder:
        store = make_store(f"limit-shards-{time.monotonic_ns()}")
        store.resize_limit(PARALLELISM_LIMIT, n)
        recorder.take()
        started = time.perf_counter()
        refused = 0
        for round_number in range(args.rounds):
            holders = [TIKey("fan", "r", f"t{i}", -1).holder(round_number + 1) for i in range(n)]
            for holder in holders:
                assert store.take_slots(PARALLELISM_LIMIT, holder, 1, limit=n, now=NOW)
            refused += not store.take_slots(PARALLELISM_LIMIT, "one-more", 1, limit=n, now=NOW)
            for holder in holders:
                assert store.release_slots(PARALLELISM_LIMIT, holder)
        result = figures(f"limit of {n}: {args.rounds} x fill and empty", recorder.take(), tasks=n * args.rounds,
                         scheduler_passes=0)
        elapsed = time.perf_counter() - started
    _, key, units, kind = result.hottest
    print(f"\nA limit of {n} slots filled and emptied {args.rounds} times ({elapsed:.0f} s on moto, load average "
          f"{os.getloadavg()[0]:.1f}); the one take beyond the size refused {refused} of {args.rounds} times.\n")
    print(f"| figure per take + release | value |\n|---|---|\n| requests | {result.requests_per_task:.2f} |\n"
          f"| WCU | {result.wcu_per_task:.2f} |\n| RCU | {result.rcu_per_task:.2f} |\n"
          f"| hottest key | `{key}` ({units:.3f} {kind}) |\n"
          f"| its share of a partition at {REFERENCE_STARTS_PER_S} starts/s | "
          f"{result.hottest_share_at_reference:.1%} |\n"
          f"| ceiling (task starts/s, this limit alone) | {result.ceiling_starts_per_s:,.0f} |\n"
          f"| largest item written | {result.largest_item_bytes:,.0f} B |")
    print("\nRequests by operation: " + ", ".join(f"{op} {c}" for op, c in sorted(result.by_operation.items())))


if __name__ == "__main__":
    main()
