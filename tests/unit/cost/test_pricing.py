"""A try's usage priced line by line, at its region's and architecture's prices; idle months by environment."""

from __future__ import annotations

import pytest

from infra.config import ENVIRONMENTS
from updraft.cost.breakdown import price_usage
from updraft.cost.idle import IdleInputs, idle_cost
from updraft.cost.prices import FALLBACK_REGION, PRICES_DATE, SOURCES, price_table
from updraft.model.usage import ARM64, X86_64, Usage


def test_a_trys_lines_in_dollars():
    usage = Usage(try_number=1, lambda_requests=1, lambda_gb_s=100, dynamodb_write_units=10,
                  dynamodb_estimated_write_units=2, dynamodb_read_units=4, sfn_transitions=3, s3_write_requests=2,
                  s3_read_requests=10, logs_bytes=1024**3)
    lines = {(line.name, line.estimated): line for line in price_usage(usage, price_table("us-east-1")).lines}
    assert lines[("Lambda compute", False)].usd == pytest.approx(100 * 0.0000166667)
    assert lines[("DynamoDB writes", False)].quantity == 8 and lines[("DynamoDB writes", True)].quantity == 2
    assert lines[("DynamoDB writes", True)].usd == pytest.approx(2 * 0.625 / 1e6)
    assert lines[("Step Functions", False)].usd == pytest.approx(3 * 0.025 / 1000)
    assert lines[("S3 requests", False)].usd == pytest.approx((2 * 0.005 + 10 * 0.0004) / 1000)
    assert lines[("CloudWatch Logs", False)].usd == pytest.approx(0.50)
    assert ("Fargate vCPU", False) not in lines  # nothing used, no line


def test_prices_by_architecture_and_a_region_without_prices():
    arm, x86 = price_table("us-west-2", ARM64), price_table("us-west-2", X86_64)
    assert arm.lambda_per_gb_second < x86.lambda_per_gb_second and arm.fargate_per_vcpu_hour < x86.fargate_per_vcpu_hour
    other = price_table("ap-south-2")
    assert other.fallback == "ap-south-2" and other.region == FALLBACK_REGION
    assert PRICES_DATE and all(url.startswith("https://aws.amazon.com/") for url in SOURCES.values())


def test_the_idle_month_of_each_environment():
    months = {name: idle_cost(IdleInputs(name, s.tick_minutes * 60, s.scheduler.memory_mib, "us-east-1",
                                         s.architecture)) for name, s in ENVIRONMENTS.items()}
    for month in months.values():
        assert month["usd_per_month"] == pytest.approx(sum(line["usd"] for line in month["lines"]), abs=1e-4)
        ticks = next(line for line in month["lines"] if line["name"] == "Scheduler tick: Lambda requests")
        assert ticks["quantity"] == pytest.approx(730 * 60)  # a tick a minute
    # The scheduler's memory is what differs: prod's 1769 MB costs more than dev's 512 MB.
    assert months["dev"]["usd_per_month"] < months["staging"]["usd_per_month"] < months["prod"]["usd_per_month"]
    slower = idle_cost(IdleInputs("dev", 600, 512))
    assert slower["usd_per_month"] < months["dev"]["usd_per_month"]  # a 10-minute tick: a tenth of the ticks
