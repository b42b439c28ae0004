"""What an environment costs per month when nothing runs: what its stack keeps and its scheduler tick does.

Nothing of Updraft's waits on a server, so an idle environment costs:

- the resources billed by the month (``STACK_RESOURCES``, as the CDK stack creates them: ``tests/infra`` checks
  the counts against the synthesized template): the KMS key that encrypts variables and connections, the alarms,
  the dashboards, the Fargate worker's image in ECR (``WORKER_IMAGE_GB``, estimated);
- the scheduler's tick (every ``tick_seconds``), which looks for due DAGs, active runs, backfills and queued
  asset events and finds none: an invocation of ``IDLE_TICK_SECONDS`` at the scheduler's memory with
  ``IDLE_TICK_READ_UNITS`` of reads (measured on the embedded AWS: 13 queries and reads, 7.5 read units, no
  write), and the few lines each invocation logs (``IDLE_TICK_LOG_BYTES``);
- storage, priced per GB-month (``per_gb_month`` in the answer): an empty environment stores next to nothing.

- in an existing VPC (``infra/config.py``'s ``ExistingVpc`` with its endpoints), the interface VPC endpoints, by
  the hour in each subnet (``IdleInputs.interface_endpoint_azs``; the gateway endpoints are free).

No NAT gateway (the Fargate tasks run in public subnets, or in the existing VPC's), no provisioned capacity, no
always-on container.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from updraft.cost.breakdown import GB, Breakdown, Line
from updraft.cost.prices import PRICES_DATE, price_table
from updraft.model.usage import X86_64, architecture

if TYPE_CHECKING:
    from updraft.config import UpdraftConfig

HOURS_PER_MONTH = 730  # AWS's month for monthly prices
STACK_RESOURCES = {"kms_keys": 1, "alarms": 5, "dashboards": 1}
WORKER_IMAGE_GB = 0.5  # the Fargate worker image (Python, Updraft and the environment's requirements), compressed
IDLE_TICK_SECONDS = 0.15
IDLE_TICK_READ_UNITS = 7.5
IDLE_TICK_REQUESTS = 13
IDLE_TICK_LOG_BYTES = 1024  # Lambda's START/END/REPORT lines and the scheduler's metrics line


@dataclass(frozen=True)
class IdleInputs:
    """What an environment's idle month depends on (``infra/config.py``'s settings, or the running config's)."""

    name: str
    tick_seconds: int
    scheduler_memory_mb: int
    region: str | None = None
    architecture: str = X86_64
    interface_endpoint_azs: int = 0  # interface endpoints x subnets (config.interface_endpoint_azs)

    @classmethod
    def of_config(cls, config: UpdraftConfig, name: str) -> IdleInputs:
        """The running environment's (its functions share one architecture: this process's)."""
        return cls(name=name, tick_seconds=config.tick_seconds, scheduler_memory_mb=config.scheduler_memory_mb,
                   region=config.region, architecture=architecture(),
                   interface_endpoint_azs=config.interface_endpoint_azs)


def idle_cost(inputs: IdleInputs) -> dict[str, Any]:
    """The idle month in dollars, line by line, with the per-GB storage prices beside it."""
    prices = price_table(inputs.region, inputs.architecture)
    ticks = HOURS_PER_MONTH * 3600 / inputs.tick_seconds
    gb_s = ticks * IDLE_TICK_SECONDS * inputs.scheduler_memory_mb / 1024
    reads = ticks * IDLE_TICK_READ_UNITS
    log_gb = ticks * IDLE_TICK_LOG_BYTES / GB
    out = Breakdown()
    out.add(Line("KMS key (variables and connections)", STACK_RESOURCES["kms_keys"], "keys",
                 STACK_RESOURCES["kms_keys"] * prices.kms_key_per_month))
    out.add(Line("CloudWatch alarms", STACK_RESOURCES["alarms"], "alarms",
                 STACK_RESOURCES["alarms"] * prices.alarm_per_month))
    out.add(Line("CloudWatch dashboards", STACK_RESOURCES["dashboards"], "dashboards",
                 STACK_RESOURCES["dashboards"] * prices.dashboard_per_month))
    out.add(Line("ECR worker image", WORKER_IMAGE_GB, "GB-month", WORKER_IMAGE_GB * prices.ecr_storage_per_gb_month,
                 estimated=True))
    if inputs.interface_endpoint_azs:
        hours = inputs.interface_endpoint_azs * HOURS_PER_MONTH
        out.add(Line("VPC interface endpoints", hours, "endpoint-AZ hours",
                     hours * prices.interface_endpoint_per_az_hour))
    out.add(Line("Scheduler tick: Lambda requests", ticks, "requests",
                 ticks * prices.lambda_per_million_requests / 1e6))
    out.add(Line("Scheduler tick: Lambda compute", gb_s, "GB-s", gb_s * prices.lambda_per_gb_second, estimated=True))
    out.add(Line("Scheduler tick: DynamoDB reads", reads, "RRU", reads * prices.dynamodb_per_million_read_units / 1e6,
                 estimated=True))
    out.add(Line("Scheduler tick: CloudWatch Logs", log_gb, "GB ingested", log_gb * prices.logs_per_gb_ingested,
                 estimated=True))
    return {"environment": inputs.name, "usd_per_month": round(out.usd, 4),
            "lines": [line.to_json() for line in out.lines],
            "per_gb_month": {"dynamodb": prices.dynamodb_storage_per_gb_month,
                             "dynamodb_backups": prices.dynamodb_backup_per_gb_month,
                             "s3": prices.s3_storage_per_gb_month, "logs": prices.logs_storage_per_gb_month},
            "notes": ["a dashboard is free while the account has at most 3",
                      "the KMS key costs $1 more a month after each of its first two yearly rotations"],
            "region": prices.region, "prices_region_missing": prices.fallback, "prices_date": PRICES_DATE}
