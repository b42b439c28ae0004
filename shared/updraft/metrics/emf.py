"""One data point as one CloudWatch Embedded Metric Format line, written where the process's metrics go.

The line is Powertools' (its EMF provider validates the name, unit and dimensions and serializes), so a line
local mode writes is byte for byte what a function would send. Where it goes:

- ``StdoutLines``: a Lambda function's stdout, which its log group turns into CloudWatch metrics;
- ``FileLines``: a file, appended (local mode and ``dags test``: ``$UPDRAFT_HOME/metrics/<environment>.emf``);
- nowhere (``EmfWriter(namespace, None)``): a scheduler built by a test or a benchmark, unless it asks.

Metrics are best effort: a line that cannot be written is logged and dropped, never raised into the scheduling
or the try that emitted it.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)


class MetricLines(Protocol):
    def write(self, line: str) -> None:
        """Write one EMF line (no newline in ``line``)."""


class StdoutLines:
    """The process's stdout: on Lambda, CloudWatch Logs extracts the metrics from these lines."""

    def write(self, line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class FileLines:
    """Lines appended to ``path`` (its folder made on first write). Each line is one ``write`` to a file opened
    with ``O_APPEND``, so the processes of local mode (its handlers, its worker pool) append to one file without
    interleaving their lines."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._fd: int | None = None

    def write(self, line: str) -> None:
        data = (line + "\n").encode()
        with self._lock:
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(self._fd, data)


class EmfLines:
    """Powertools' EMF provider for one namespace, made once and refilled per data point (making one per point
    costs twice as much: ~100 us a line on a loaded core, on the hop from a try's end to the next)."""

    def __init__(self, namespace: str) -> None:
        from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

        # service="": not the function's POWERTOOLS_SERVICE_NAME, which would add a dimension Airflow's metric lacks.
        self._provider = AmazonCloudWatchEMFProvider(namespace=namespace, service="")
        self._lock = threading.Lock()

    def line(self, name: str, value: float, unit: str, dimensions: Mapping[str, str]) -> str:
        """One data point as an EMF line: ``name`` with exactly ``dimensions``."""
        provider = self._provider
        with self._lock:
            provider.metric_set.clear()
            provider.dimension_set.clear()
            provider.add_metric(name=name, unit=unit, value=value)
            for key, text in dimensions.items():
                provider.add_dimension(name=key, value=text)
            return json.dumps(provider.serialize_metric_set(), separators=(",", ":"))


class EmfWriter:
    """Writes data points of ``namespace`` to ``lines`` (None: nowhere)."""

    def __init__(self, namespace: str, lines: MetricLines | None) -> None:
        self.namespace = namespace
        self.lines = lines
        self._emf: EmfLines | None = None

    @property
    def enabled(self) -> bool:
        return self.lines is not None

    def put(self, name: str, value: float, unit: str, dimensions: Mapping[str, str]) -> None:
        if self.lines is None:
            return
        try:
            if self._emf is None:
                self._emf = EmfLines(self.namespace)
            self.lines.write(self._emf.line(name, value, unit, dimensions))
        except Exception:  # best effort (module doc): a full disk must not fail a try
            log.warning("metric %s not written", name, exc_info=True)

    def put_line(self, line: str) -> None:
        """An EMF line serialized elsewhere (a handler's own Powertools metrics, in local mode)."""
        if self.lines is None:
            return
        try:
            self.lines.write(line)
        except Exception:
            log.warning("metrics line not written", exc_info=True)
