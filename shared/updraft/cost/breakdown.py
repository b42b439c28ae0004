"""Dollars, line by line: what a try, a run, a DAG's day or an environment's idle month costs, and of what.

A :class:`Breakdown` is a list of :class:`Line` s (a service's charge: the quantity, its unit, the dollars, and
whether the quantity was measured or estimated); breakdowns add up line by line. :func:`price_usage` prices one
try's recorded :class:`~updraft.model.usage.Usage` with a :class:`~updraft.cost.prices.PriceTable`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from updraft.cost.prices import PriceTable
from updraft.model.usage import Usage

GB = 1024**3


@dataclass
class Line:
    """One charge: ``quantity`` ``unit`` of ``name``, ``usd`` dollars; ``estimated``: not measured."""

    name: str
    quantity: float
    unit: str
    usd: float
    estimated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "quantity": round(self.quantity, 6), "unit": self.unit,
                "usd": self.usd, "estimated": self.estimated}


@dataclass
class Breakdown:
    """Lines in a stable order (the order they were first added); the same name and estimate add up."""

    lines: list[Line] = field(default_factory=list)

    @property
    def usd(self) -> float:
        return sum(line.usd for line in self.lines)

    def add(self, line: Line) -> Breakdown:
        if not line.quantity:
            return self
        for mine in self.lines:
            if (mine.name, mine.estimated) == (line.name, line.estimated):
                mine.quantity += line.quantity
                mine.usd += line.usd
                return self
        self.lines.append(Line(line.name, line.quantity, line.unit, line.usd, line.estimated))
        return self

    def plus(self, other: Breakdown) -> Breakdown:
        out = Breakdown()
        for line in (*self.lines, *other.lines):
            out.add(line)
        return out

    def to_json(self) -> dict[str, Any]:
        return {"usd": self.usd, "lines": [line.to_json() for line in self.lines]}


def price_usage(usage: Usage, prices: PriceTable) -> Breakdown:
    """One try's charges. DynamoDB's units that DynamoDB did not report (``dynamodb_estimated_*_units``) are on
    lines of their own, marked estimated."""
    out = Breakdown()
    out.add(Line("Lambda requests", usage.lambda_requests, "requests",
                 usage.lambda_requests * prices.lambda_per_million_requests / 1e6))
    out.add(Line("Lambda compute", usage.lambda_gb_s, "GB-s", usage.lambda_gb_s * prices.lambda_per_gb_second))
    out.add(Line("Fargate vCPU", usage.fargate_vcpu_s, "vCPU-s",
                 usage.fargate_vcpu_s * prices.fargate_per_vcpu_hour / 3600))
    out.add(Line("Fargate memory", usage.fargate_gb_s, "GB-s", usage.fargate_gb_s * prices.fargate_per_gb_hour / 3600))
    for name, unit, total, estimated, price in (
            ("DynamoDB writes", "WRU", usage.dynamodb_write_units, usage.dynamodb_estimated_write_units,
             prices.dynamodb_per_million_write_units),
            ("DynamoDB reads", "RRU", usage.dynamodb_read_units, usage.dynamodb_estimated_read_units,
             prices.dynamodb_per_million_read_units)):
        measured = max(total - estimated, 0.0)
        out.add(Line(name, measured, unit, measured * price / 1e6))
        out.add(Line(name, estimated, unit, estimated * price / 1e6, estimated=True))
    out.add(Line("Step Functions", usage.sfn_transitions, "transitions",
                 usage.sfn_transitions * prices.step_functions_per_thousand_transitions / 1000))
    s3_usd = (usage.s3_write_requests * prices.s3_per_thousand_write_requests
              + usage.s3_read_requests * prices.s3_per_thousand_read_requests) / 1000
    out.add(Line("S3 requests", usage.s3_write_requests + usage.s3_read_requests, "requests", s3_usd))
    out.add(Line("CloudWatch Logs", usage.logs_bytes / GB, "GB ingested",
                 usage.logs_bytes / GB * prices.logs_per_gb_ingested))
    return out
