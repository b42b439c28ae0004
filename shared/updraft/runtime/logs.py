"""Per-try task logs: what a try prints (stdout, stderr) and logs (``logging``) goes to its own log.

Capture is per thread: local mode runs tries concurrently in threads of one process, so ``sys.stdout`` and
``sys.stderr`` are replaced once by streams that route a write to the log of the try running in the writing
thread (and to the original stream otherwise), and one root logging handler does the same for records. Threads
a task starts itself are not followed (their output goes to the process's streams).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import logging
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from updraft.scheduling.records import TIKey

_local = threading.local()
_install_lock = threading.Lock()
_installed = False


class LogSink(Protocol):
    def write(self, key: TIKey, try_number: int, text: str) -> None: ...

    def read(self, key: TIKey, try_number: int) -> str | None: ...


class LocalLogSink:
    """``<folder>/<dag_id>/<run_id>/<task_id>/<map_index>/<try>.log``, where the local API reads them."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def path(self, key: TIKey, try_number: int) -> Path:
        return self.folder / key.dag_id / key.run_id / key.task_id / str(key.map_index) / f"{try_number}.log"

    def write(self, key: TIKey, try_number: int, text: str) -> None:
        path = self.path(key, try_number)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def read(self, key: TIKey, try_number: int) -> str | None:
        path = self.path(key, try_number)
        return path.read_text(encoding="utf-8") if path.is_file() else None


class S3LogSink:
    """``s3://bucket/<prefix><dag_id>/<run_id>/<task_id>/<map_index>/<try>.log``: one object per try."""

    def __init__(self, s3_client: Any, bucket: str, prefix: str = "logs/") -> None:
        self.s3_client = s3_client
        self.bucket = bucket
        self.prefix = prefix

    def key(self, key: TIKey, try_number: int) -> str:
        return f"{self.prefix}{key.dag_id}/{key.run_id}/{key.task_id}/{key.map_index}/{try_number}.log"

    def write(self, key: TIKey, try_number: int, text: str) -> None:
        self.s3_client.put_object(Bucket=self.bucket, Key=self.key(key, try_number),
                                  Body=text.encode("utf-8"), ContentType="text/plain; charset=utf-8")

    def read(self, key: TIKey, try_number: int) -> str | None:
        try:
            response = self.s3_client.get_object(Bucket=self.bucket, Key=self.key(key, try_number))
        except self.s3_client.exceptions.NoSuchKey:
            return None
        return response["Body"].read().decode("utf-8")


class _Buffer:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.lock = threading.Lock()

    def write(self, text: str) -> None:
        with self.lock:
            self.parts.append(text)

    def text(self) -> str:
        with self.lock:
            return "".join(self.parts)


class _RoutingStream(io.TextIOBase):
    """Writes from a thread with a capturing try go to its buffer; everything else to the original stream."""

    def __init__(self, original: Any) -> None:
        self.original = original

    def write(self, text: str) -> int:
        buffer = getattr(_local, "buffer", None)
        if buffer is None:
            return self.original.write(text)
        buffer.write(text)
        return len(text)

    def flush(self) -> None:
        if getattr(_local, "buffer", None) is None:
            self.original.flush()

    def fileno(self) -> int:
        return self.original.fileno()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.original, "encoding", "utf-8")


class _RoutingHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        buffer = getattr(_local, "buffer", None)
        if buffer is not None:
            buffer.write(self.format(record) + "\n")


def _install() -> None:
    """Wrap the process's streams (again, if something such as pytest replaced them) and add the handler once."""
    global _installed
    with _install_lock:
        if not isinstance(sys.stdout, _RoutingStream):
            sys.stdout = _RoutingStream(sys.stdout)
        if not isinstance(sys.stderr, _RoutingStream):
            sys.stderr = _RoutingStream(sys.stderr)
        if _installed:
            return
        handler = _RoutingHandler(level=logging.DEBUG)
        handler.setFormatter(logging.Formatter("[%(asctime)s] {%(filename)s:%(lineno)d} %(levelname)s - %(message)s"))
        logging.getLogger().addHandler(handler)
        # INFO and above from any logger reach the try's log, as in an Airflow task process (whose root logger
        # is at INFO); the routing handler ignores records from threads without a try.
        for logger in (logging.getLogger(), logging.getLogger("airflow")):
            if logger.level == logging.NOTSET or logger.level > logging.INFO:
                logger.setLevel(logging.INFO)
        _installed = True


@contextlib.contextmanager
def capture(sink: LogSink | None, key: TIKey, try_number: int) -> Iterator[_Buffer]:
    """Route this thread's output into a buffer for the try; written to ``sink`` when the try ends."""
    _install()
    buffer = _Buffer()
    previous = getattr(_local, "buffer", None)
    _local.buffer = buffer
    try:
        yield buffer
    finally:
        _local.buffer = previous
        if sink is not None:
            stamp = dt.datetime.now(dt.UTC).isoformat()
            sink.write(key, try_number, buffer.text() + f"[{stamp}] end of try {try_number}\n")
