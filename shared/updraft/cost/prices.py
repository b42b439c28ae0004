"""AWS's published on-demand prices Updraft's costs are computed with, per region and architecture, in US dollars.

Prices as published on 2026-12-01 (``PRICES_DATE``) on the pages in ``SOURCES``, without free tiers (an account's
free tier is shared by everything in it, so a run's cost is what it costs once the free tier is spent) and
without savings plans. Regions with the same prices for every service below share one table; a region not listed
is priced with ``FALLBACK_REGION``'s prices and the cost says so (:attr:`PriceTable.fallback`). To update: change
the figures and ``PRICES_DATE`` together, from the pages in ``SOURCES``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from updraft.model.usage import ARM64, X86_64

PRICES_DATE = "2026-12-01"
SOURCES = {
    "lambda": "https://aws.amazon.com/lambda/pricing/",
    "fargate": "https://aws.amazon.com/fargate/pricing/",
    "dynamodb": "https://aws.amazon.com/dynamodb/pricing/on-demand/",
    "step_functions": "https://aws.amazon.com/step-functions/pricing/",
    "s3": "https://aws.amazon.com/s3/pricing/",
    "cloudwatch": "https://aws.amazon.com/cloudwatch/pricing/",
    "kms": "https://aws.amazon.com/kms/pricing/",
    "ecr": "https://aws.amazon.com/ecr/pricing/",
    "privatelink": "https://aws.amazon.com/privatelink/pricing/",
}
FALLBACK_REGION = "us-east-1"


@dataclass(frozen=True)
class PriceTable:
    """One region's and architecture's prices, each in the unit AWS publishes it in."""

    region: str
    architecture: str
    # Per use
    lambda_per_million_requests: float
    lambda_per_gb_second: float
    fargate_per_vcpu_hour: float
    fargate_per_gb_hour: float
    dynamodb_per_million_write_units: float  # on-demand write request units
    dynamodb_per_million_read_units: float
    step_functions_per_thousand_transitions: float  # Standard workflows
    s3_per_thousand_write_requests: float  # S3 Standard: PUT, COPY, POST, LIST
    s3_per_thousand_read_requests: float  # GET, SELECT and all other requests
    logs_per_gb_ingested: float  # CloudWatch Logs, standard log class
    # Per month, whether anything runs or not
    kms_key_per_month: float  # a customer managed key (a rotated key adds as much for each of its first 2 rotations)
    alarm_per_month: float  # a standard-resolution metric alarm
    dashboard_per_month: float  # a custom dashboard beyond the account's first three
    logs_storage_per_gb_month: float
    dynamodb_storage_per_gb_month: float
    dynamodb_backup_per_gb_month: float  # continuous backups (point-in-time recovery)
    s3_storage_per_gb_month: float
    ecr_storage_per_gb_month: float
    interface_endpoint_per_az_hour: float  # an interface VPC endpoint in one AZ (PrivateLink), by the hour
    fallback: str | None = None  # the region asked for, when it had no prices and these are FALLBACK_REGION's


# The US East/West regions below publish the same prices for every service listed (2026-12-01).
_US = {
    "lambda_per_million_requests": 0.20,
    "dynamodb_per_million_write_units": 0.625, "dynamodb_per_million_read_units": 0.125,
    "step_functions_per_thousand_transitions": 0.025,
    "s3_per_thousand_write_requests": 0.005, "s3_per_thousand_read_requests": 0.0004,
    "logs_per_gb_ingested": 0.50,
    "kms_key_per_month": 1.00, "alarm_per_month": 0.10, "dashboard_per_month": 3.00,
    "logs_storage_per_gb_month": 0.03, "dynamodb_storage_per_gb_month": 0.25, "dynamodb_backup_per_gb_month": 0.20,
    "s3_storage_per_gb_month": 0.023, "ecr_storage_per_gb_month": 0.10,
    "interface_endpoint_per_az_hour": 0.01,
}
_US_ARCHITECTURES = {
    X86_64: {"lambda_per_gb_second": 0.0000166667, "fargate_per_vcpu_hour": 0.04048, "fargate_per_gb_hour": 0.004445},
    ARM64: {"lambda_per_gb_second": 0.0000133334, "fargate_per_vcpu_hour": 0.03238, "fargate_per_gb_hour": 0.00356},
}
PRICES: dict[str, dict[str, dict[str, float]]] = {
    region: {arch: {**_US, **by_arch} for arch, by_arch in _US_ARCHITECTURES.items()}
    for region in ("us-east-1", "us-east-2", "us-west-2")
}


def price_table(region: str | None, architecture: str = X86_64) -> PriceTable:
    """The prices of ``region`` (None: ``FALLBACK_REGION``) for ``architecture`` (x86_64 or arm64)."""
    arch = architecture if architecture in (X86_64, ARM64) else X86_64
    wanted = region or FALLBACK_REGION
    found = wanted if wanted in PRICES else FALLBACK_REGION
    table = PriceTable(found, arch, **PRICES[found][arch])  # type: ignore[arg-type]  # the figures' names
    return table if found == wanted else dataclasses.replace(table, fallback=wanted)
