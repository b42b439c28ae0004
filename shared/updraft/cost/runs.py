"""What a run and a DAG's day cost: the tries' recorded usage, priced, plus the scheduling the tries cannot record.

A run's cost is the sum of its tries' (each recorded try once: the instance's current try and the tries a retry or
a clear kept, ``TRY#`` items) and its **scheduling overhead**, which no try's record holds and which is estimated,
never measured, and shown as such:

- the scheduler passes that look at the run (``SCHEDULER_PASSES_PER_RUN``: the one that starts it, the one that
  ends it), each an invocation of the scheduler function with its reads and writes;
- each try's worker after its end write (the mini scheduler claiming and dispatching the next tasks, the slots
  released): ``TAIL_SECONDS`` more of the same function, and its requests;
- each wait's end (a deferral resumed, a sensor's next poke): the worker invocation Step Functions makes.

The constants were read off ``bench/cost_bench.py`` (the capacity model's charges by role beside the tries'
records, on the benchmark DAGs, 2026-12-02): a pass that starts a run, 10-13 write and 10-23 read units; a worker
after its end write, 1-2 write and ~3 read units beyond its start and end in a chain, ~8 and ~5 in a 200-wide
fan-out (its slots' items hold 200 holders), so a wide fan-out's overhead is understated.

A try that ended without a record of what it used (it ran before this release, in ``dags test``, or its worker
died before its end write) is counted in ``unmetered`` and costs nothing here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from updraft.cost.breakdown import Breakdown, Line, price_usage
from updraft.cost.prices import PRICES_DATE, PriceTable, price_table
from updraft.model.records import DagRun, TaskInstance
from updraft.model.states import RAN_TRY_END_STATES
from updraft.model.usage import Usage
from updraft.store.api import Store

SCHEDULER_PASSES_PER_RUN = 2
SCHEDULER_PASS_SECONDS = 0.15
SCHEDULER_MEMORY_GB = 1.0  # staging's and between dev's and prod's (infra/config.py)
SCHEDULER_PASS_READ_UNITS = 11.0
SCHEDULER_PASS_WRITE_UNITS = 12.0
TAIL_SECONDS = 0.05
TAIL_READ_UNITS = 3.0
TAIL_WRITE_UNITS = 2.0
RESUME_SECONDS = 0.1  # the worker invocation that ends a wait: resume the try, schedule its run
WAIT_TRANSITIONS = 3  # a wait's state transitions (``triggers.state_machine.transitions``): how waits are counted



@dataclass
class TryCost:
    task: str  # the instance's label (``task`` or ``task[3]``)
    try_number: int
    state: str | None
    usage: Usage
    breakdown: Breakdown

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "try_number": self.try_number, "state": self.state,
                "seconds": round(self.usage.seconds, 3), **self.breakdown.to_json()}


@dataclass
class RunCost:
    dag_id: str
    run_id: str
    region: str
    tries: list[TryCost] = field(default_factory=list)
    overhead: Breakdown = field(default_factory=Breakdown)
    unmetered: int = 0
    fallback: str | None = None  # the region asked for, when its prices are not in the table

    @property
    def metered(self) -> Breakdown:
        out = Breakdown()
        for tried in self.tries:
            out = out.plus(tried.breakdown)
        return out

    @property
    def breakdown(self) -> Breakdown:
        return self.metered.plus(self.overhead)

    @property
    def usd(self) -> float:
        return self.breakdown.usd

    def to_json(self) -> dict[str, Any]:
        return {"dag_id": self.dag_id, "dag_run_id": self.run_id, "usd": self.usd,
                "tries_usd": self.metered.usd, "overhead_usd": self.overhead.usd,
                "lines": self.breakdown.to_json()["lines"], "overhead": self.overhead.to_json()["lines"],
                "tries": [t.to_json() for t in self.tries], "unmetered_tries": self.unmetered,
                "region": self.region, "prices_region_missing": self.fallback, "prices_date": PRICES_DATE}


def recorded_tries(store: Store, tis: list[TaskInstance]) -> tuple[list[tuple[TaskInstance, Usage]], int]:
    """Each try of ``tis`` that recorded its usage, once, with its record; and how many ended without one."""
    found: list[tuple[TaskInstance, Usage]] = []
    unmetered = 0
    for ti in tis:
        kept = store.get_tries(ti.key) if ti.try_number > 1 else []  # a retry or a clear kept the earlier tries
        seen: set[int] = set()
        for record in [*kept, ti]:
            usage = Usage.from_record(record.usage)
            if usage is not None and usage.try_number not in seen:
                seen.add(usage.try_number)
                found.append((record, usage))
            elif (usage is None and record.state in RAN_TRY_END_STATES and record.start_date is not None
                  and record.try_number not in seen):
                unmetered += 1
    return found, unmetered


def scheduling_overhead(tries: list[Usage], prices: PriceTable) -> Breakdown:
    """The run's scheduling the tries cannot record, estimated (module docstring)."""
    out = Breakdown()
    passes = SCHEDULER_PASSES_PER_RUN
    lambda_tails = [u for u in tries if u.lambda_requests]
    waits = sum(round(u.sfn_transitions / WAIT_TRANSITIONS) for u in tries)
    requests = passes + waits
    gb_s = (passes * SCHEDULER_PASS_SECONDS * SCHEDULER_MEMORY_GB
            + sum(TAIL_SECONDS * (u.lambda_gb_s / u.seconds if u.seconds else 1.0) for u in lambda_tails)
            + waits * RESUME_SECONDS * SCHEDULER_MEMORY_GB)
    writes = passes * SCHEDULER_PASS_WRITE_UNITS + len(tries) * TAIL_WRITE_UNITS + waits * TAIL_WRITE_UNITS
    reads = passes * SCHEDULER_PASS_READ_UNITS + len(tries) * TAIL_READ_UNITS + waits * TAIL_READ_UNITS
    out.add(Line("Lambda requests", requests, "requests", requests * prices.lambda_per_million_requests / 1e6, True))
    out.add(Line("Lambda compute", gb_s, "GB-s", gb_s * prices.lambda_per_gb_second, True))
    out.add(Line("DynamoDB writes", writes, "WRU", writes * prices.dynamodb_per_million_write_units / 1e6, True))
    out.add(Line("DynamoDB reads", reads, "RRU", reads * prices.dynamodb_per_million_read_units / 1e6, True))
    return out


def run_cost(store: Store, dag_id: str, run_id: str, *, region: str | None) -> RunCost:
    """``run_id``'s cost, its tries priced at ``region``'s prices for the architecture each ran on."""
    tries, unmetered = recorded_tries(store, store.get_run_tis(dag_id, run_id))
    table = price_table(region)
    out = RunCost(dag_id, run_id, table.region, unmetered=unmetered, fallback=table.fallback)
    for record, usage in sorted(tries, key=lambda found: (found[0].task_id, found[0].map_index, found[1].try_number)):
        out.tries.append(TryCost(record.key.label, usage.try_number, record.state and str(record.state), usage,
                                 price_usage(usage, price_table(region, usage.architecture))))
    out.overhead = scheduling_overhead([usage for _, usage in tries], table)
    return out


def run_day(run: DagRun) -> dt.date | None:
    """The day (UTC) a run counts for: when it started, else when it was queued or is dated."""
    when = run.start_date or run.queued_at or run.logical_date or run.run_after
    return when.astimezone(dt.UTC).date() if when is not None else None


def daily_costs(store: Store, dag_id: str, *, days: int, today: dt.date, region: str | None,
                max_runs: int = 1000, cost_of: Callable[[DagRun], float] | None = None) -> list[dict[str, Any]]:
    """The DAG's cost per day for the ``days`` days up to ``today`` (oldest first; days without runs at 0), from
    its newest ``max_runs`` runs."""
    first = today - dt.timedelta(days=days - 1)
    price = cost_of or (lambda run: run_cost(store, dag_id, run.run_id, region=region).usd)
    totals = {first + dt.timedelta(days=n): [0, 0.0] for n in range(days)}
    for run in store.list_runs(dag_id, limit=max_runs):
        day = run_day(run)
        if day is not None and day in totals:
            totals[day][0] += 1
            totals[day][1] += price(run)
    return [{"date": day.isoformat(), "runs": int(n), "usd": usd} for day, (n, usd) in totals.items()]
