"""What one try used of each metered AWS service: the small map a try keeps on its record (``TaskInstance.usage``),
which ``updraft.cost`` prices into dollars.

A try's usage is written by the write its end makes anyway (``finish_try``: success, failure, retry, deferral,
reschedule), never by a request of its own. A try that runs more than once under one try number (a deferred try
resumed, a reschedule-mode sensor's pokes) adds each run to what its record already holds for that try number
(:func:`accumulated`); a new try number starts from nothing. ``try_number`` in the map says which try it is, so
the record of the next try (claimed, not yet ended) is never read as holding the previous try's usage twice.

Figures are quantities, not dollars (prices change, usage does not): Lambda requests and GB-seconds, Fargate
vCPU-seconds and GB-seconds, DynamoDB read and write units (as DynamoDB reported them in ``ConsumedCapacity``,
``dynamodb_estimated_*_units`` of them estimated where it reports none: a failed conditional write, the end write
itself), Step Functions state transitions, S3 requests by price class and bytes, CloudWatch Logs requests and
ingested bytes.
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Mapping
from typing import Any

# Lambda's architectures, as the functions are configured (infra/config.py ``architecture``).
X86_64 = "x86_64"
ARM64 = "arm64"


def architecture() -> str:
    """Lambda's name for this machine's architecture (what prices a GB-second): the functions of an environment
    all run on one (``infra/config.py``), so any of them can tell."""
    return ARM64 if platform.machine().lower() in ("aarch64", "arm64") else X86_64


@dataclasses.dataclass
class Usage:
    """One try's metered quantities (all zero: nothing metered)."""

    try_number: int = 0
    seconds: float = 0.0  # wall time of the runs metered (from the dispatch to the end write)
    architecture: str = X86_64
    lambda_requests: float = 0.0
    lambda_gb_s: float = 0.0
    fargate_vcpu_s: float = 0.0  # Fargate bills per second with a one-minute minimum per task: applied here
    fargate_gb_s: float = 0.0
    dynamodb_requests: float = 0.0
    dynamodb_read_units: float = 0.0
    dynamodb_write_units: float = 0.0
    dynamodb_estimated_read_units: float = 0.0  # of the read and write units above, those estimated, not reported
    dynamodb_estimated_write_units: float = 0.0
    sfn_transitions: float = 0.0  # Standard workflow state transitions the try's waits take (deferral, next poke)
    s3_write_requests: float = 0.0  # PUT, COPY, POST, LIST (S3's dearer request class)
    s3_read_requests: float = 0.0  # GET, HEAD and the rest
    s3_bytes: float = 0.0  # uploaded and downloaded (transfer inside the region is free; kept for the breakdown)
    logs_requests: float = 0.0
    logs_bytes: float = 0.0  # CloudWatch Logs ingestion: the messages' bytes

    def to_record(self) -> dict[str, Any]:
        """The map stored on the try's record: zero quantities are left out to keep the item small."""
        out: dict[str, Any] = {"try_number": self.try_number, "architecture": self.architecture}
        for field in _QUANTITIES:
            value = getattr(self, field)
            if value:
                out[field] = round(value, 6)
        return out

    @classmethod
    def from_record(cls, record: Mapping[str, Any] | None) -> Usage | None:
        """The usage a record holds (None: none recorded). Unknown keys (a later release's) are ignored."""
        if not record:
            return None
        values: dict[str, Any] = {f: float(record[f]) for f in _QUANTITIES if f in record}
        return cls(try_number=int(record.get("try_number", 0)),
                   architecture=str(record.get("architecture", X86_64)), **values)

    def plus(self, other: Usage) -> Usage:
        """Both added up (the architecture and try number of ``self``)."""
        return dataclasses.replace(self, **{f: getattr(self, f) + getattr(other, f) for f in _QUANTITIES})


_QUANTITIES = tuple(f.name for f in dataclasses.fields(Usage) if f.name not in ("try_number", "architecture"))


def accumulated(recorded: Mapping[str, Any] | None, this_run: Usage) -> dict[str, Any]:
    """The record to write at the end of ``this_run``: added to what the instance holds for the same try number
    (a resumed deferral, the next poke), else ``this_run`` alone."""
    earlier = Usage.from_record(recorded)
    if earlier is None or earlier.try_number != this_run.try_number:
        return this_run.to_record()
    return this_run.plus(earlier).to_record()
