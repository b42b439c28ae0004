"""Per-try task logs: what a try prints (stdout, stderr) and logs (``logging``) goes to its own log, with every
known secret replaced by ``***`` (:mod:`updraft.secrets.masker`) before it is written anywhere.

Capture is per thread: local mode runs tries concurrently in threads of one process, so ``sys.stdout`` and
``sys.stderr`` are replaced once by streams that route a write to the log of the try running in the writing
thread (and to the original stream otherwise), and one root logging handler does the same for records. Threads
a task starts itself are not followed (their output goes to the process's streams).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import io
import logging
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from updraft.model.identifiers import path_component_problem, run_id_problem
from updraft.model.records import TIKey
from updraft.resources import LOGS_PREFIX
from updraft.runtime.log_limit import CappedLog, limit_in_force
from updraft.secrets.masker import redact_text

_local = threading.local()
_install_lock = threading.Lock()
_installed = False


def check_log_ids(key: TIKey) -> None:
    """Raise ``ValueError`` unless every id of ``key`` is safe to build a log path or key from.

    The run id must be valid as Airflow validates it; dag and task ids (validated at parse) must each stay one
    path component. Checked where the path is built, so no caller can write or read outside the logs folder.
    """
    problem = (run_id_problem(key.run_id) or path_component_problem("dag_id", key.dag_id)
               or path_component_problem("task_id", key.task_id))
    if problem is not None:
        raise ValueError(f"no log path for this task instance: {problem}")


class LogSink(Protocol):
    def write(self, key: TIKey, try_number: int, text: str) -> None: ...

    def read(self, key: TIKey, try_number: int) -> str | None: ...


class LocalLogSink:
    """``<folder>/<dag_id>/<run_id>/<task_id>/<map_index>/<try>.log``, where the local API reads them."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def path(self, key: TIKey, try_number: int) -> Path:
        """The try's log file; ids that could leave the folder (``..``, ``/``) raise ``ValueError``."""
        check_log_ids(key)
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

    def __init__(self, s3_client: Any, bucket: str, prefix: str = LOGS_PREFIX) -> None:
        self.s3_client = s3_client
        self.bucket = bucket
        self.prefix = prefix

    def key(self, key: TIKey, try_number: int) -> str:
        check_log_ids(key)
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


class CloudWatchLogSink:
    """One CloudWatch Logs stream per try in ``log_group`` (on AWS); the client is injected.

    The stream is ``<dag_id>/<run_id>/<task_id>/<map_index>/<try>``, each id percent-encoded (``quote`` with no
    safe characters), so a name holds neither ``:`` nor ``*`` (which CloudWatch refuses) and no id can spill into
    the next one: two tries never share a stream. A name longer than CloudWatch's 512 characters keeps its head
    and ends in ``#`` and the SHA-256 of the whole name (``#`` is always encoded in the ids, so such a name is
    never an ordinary one).

    A write is one delivery of the try's whole log: the events are its lines (split further at 256 KiB), all
    stamped with the delivery's time, sent in batches within PutLogEvents' limits (10,000 events, 1 MiB counting
    26 bytes per event). A second delivery of the same try (a retried write) finds the stream there and appends
    with a later timestamp; a read returns the latest delivery only, so the log reads as written once, like the
    file and S3 sinks that overwrite. Only ``logs:CreateLogStream`` and ``logs:PutLogEvents`` are needed to write.
    """

    MAX_STREAM_NAME = 512
    EVENT_OVERHEAD = 26  # bytes PutLogEvents counts per event on top of its message
    MAX_EVENT_BYTES = 256 * 1024 - EVENT_OVERHEAD
    MAX_BATCH_BYTES = 1024 * 1024
    MAX_BATCH_EVENTS = 10_000

    def __init__(self, logs_client: Any, log_group: str) -> None:
        self.logs_client = logs_client
        self.log_group = log_group

    @classmethod
    def stream_name(cls, key: TIKey, try_number: int) -> str:
        name = "/".join((quote(key.dag_id, safe=""), quote(key.run_id, safe=""), quote(key.task_id, safe=""),
                         str(key.map_index), str(try_number)))
        if len(name) > cls.MAX_STREAM_NAME:
            digest = hashlib.sha256(name.encode("utf-8")).hexdigest()
            name = f"{name[:cls.MAX_STREAM_NAME - len(digest) - 1]}#{digest}"
        return name

    def write(self, key: TIKey, try_number: int, text: str) -> None:
        stream = self.stream_name(key, try_number)
        try:
            self.logs_client.create_log_stream(logGroupName=self.log_group, logStreamName=stream)
        except self.logs_client.exceptions.ResourceAlreadyExistsException:
            # A retried delivery: the earlier one took its timestamp before this call, so 2 ms later this
            # one's is strictly later and a read tells the two apart.
            time.sleep(0.002)
        timestamp = int(time.time() * 1000)
        for batch in self.batches(text):
            self.logs_client.put_log_events(
                logGroupName=self.log_group, logStreamName=stream,
                logEvents=[{"timestamp": timestamp, "message": message} for message in batch])

    def read(self, key: TIKey, try_number: int) -> str | None:
        request = {"logGroupName": self.log_group, "logStreamName": self.stream_name(key, try_number),
                   "startFromHead": True}
        events: list[dict[str, Any]] = []
        token = None
        while True:
            try:
                page = self.logs_client.get_log_events(**request, **({"nextToken": token} if token else {}))
            except self.logs_client.exceptions.ResourceNotFoundException:
                return None
            events.extend(page.get("events", ()))
            following = page.get("nextForwardToken")
            if not following or following == token:
                break
            token = following
        if not events:
            return ""  # an empty log: the stream exists, with nothing in it
        latest = max(event["timestamp"] for event in events)
        return "".join(event["message"] for event in events if event["timestamp"] == latest)

    @classmethod
    def messages(cls, text: str) -> Iterator[str]:
        """The events' messages: one per line (its newline kept, so joining them gives the text back), a line
        over the event limit cut at UTF-8 character boundaries. A character UTF-8 cannot carry (a lone surrogate
        from undecodable output) becomes ``?`` rather than losing the try's whole log."""
        for match in _LINE.finditer(text):
            data = match.group().encode("utf-8", "replace")
            while len(data) > cls.MAX_EVENT_BYTES:
                cut = cls.MAX_EVENT_BYTES
                while data[cut] & 0xC0 == 0x80:  # not inside a multi-byte character
                    cut -= 1
                yield data[:cut].decode("utf-8")
                data = data[cut:]
            if data:
                yield data.decode("utf-8")

    @classmethod
    def batches(cls, text: str) -> Iterator[list[str]]:
        """The messages grouped into PutLogEvents calls within the per-call event count and byte limits."""
        batch: list[str] = []
        size = 0
        for message in cls.messages(text):
            cost = len(message.encode("utf-8")) + cls.EVENT_OVERHEAD
            if batch and (len(batch) == cls.MAX_BATCH_EVENTS or size + cost > cls.MAX_BATCH_BYTES):
                yield batch
                batch, size = [], 0
            batch.append(message)
            size += cost
        if batch:
            yield batch


_LINE = re.compile(r"[^\n]*\n|[^\n]+")


class _Buffer:
    """A try's log as it is written, kept within the process's log limit (``log_limit``)."""

    def __init__(self) -> None:
        self.capped = CappedLog(limit_in_force())
        self.lock = threading.Lock()
        self.written = 0  # how many writes the last live write held
        # Takes what was written elsewhere and not received here yet (a relayed log's pieces still on their way):
        # called before a stop writes the log.
        self.catch_up: Callable[[], None] | None = None

    def write(self, text: str) -> None:
        with self.lock:
            self.capped.add(text)
        for follower in _followers:
            follower(text)

    def keep(self, text: str) -> None:
        """Add ``text`` without passing it to the followers (a line the end of the try writes itself)."""
        with self.lock:
            self.capped.add(text)

    @property
    def writes(self) -> int:
        return self.capped.writes

    @property
    def size(self) -> int:
        """The bytes written, kept or not."""
        return self.capped.size

    def text(self) -> str:
        with self.lock:
            return self.capped.text()

    def text_so_far(self) -> str:
        """The text without taking the lock: a signal handler may interrupt a write that holds it (joining a
        list or a deque is atomic under the GIL)."""
        return self.capped.text()


# The tries capturing in this process now: what a stop signal writes before the process goes, and what the live
# writer follows.
_open: dict[int, tuple[LogSink, TIKey, int, _Buffer]] = {}

# A running try's log is written as it grows, so the API and the UI follow it: every LIVE_EVERY_S seconds (0: only
# at the end), while it is under LIVE_LIMIT (each write delivers the whole log so far; past that size only the
# try's end writes it). Masked as it is written, as Airflow masks a line when it is emitted.
LIVE_EVERY_S = float(os.environ.get("UPDRAFT_LIVE_LOG_SECONDS", "5"))
LIVE_LIMIT = 256 * 1024
_live_lock = threading.Lock()  # a live write and a try's end never interleave: the end's write comes last
_live_writer: list[threading.Thread] = []


def write_live_logs() -> None:
    """Write the log so far of every open try that grew since its last write."""
    for token, (sink, key, try_number, buffer) in list(_open.items()):
        with _live_lock:
            writes = buffer.writes
            if token not in _open or writes == buffer.written or buffer.size > LIVE_LIMIT:
                continue
            text = buffer.text()
            buffer.written = writes
            with contextlib.suppress(Exception):  # a failed live write loses nothing: the end writes it all
                sink.write(key, try_number, redact_text(text))


def _start_live_writer() -> None:
    with _install_lock:
        if LIVE_EVERY_S <= 0 or _live_writer:
            return

        def loop() -> None:
            while True:
                time.sleep(LIVE_EVERY_S)
                write_live_logs()

        _live_writer.append(threading.Thread(target=loop, name="live-task-logs", daemon=True))
        _live_writer[0].start()


_followers: list[Callable[[str], None]] = []
_flushers: list[Callable[[], None]] = []


def follow_writes(follower: Callable[[str], None], flush: Callable[[], None] | None = None) -> None:
    """Call ``follower`` with each piece a try's log receives, as it is written, and ``flush`` when the try flushes
    its stdout or stderr: a try's child process sends its log to the worker this way, so a worker stopped a moment
    later still writes what was printed so far."""
    _followers.append(follower)
    if flush is not None:
        _flushers.append(flush)


class RelayedLog(_Buffer):
    """The log of a try whose code runs in another process (``supervisor``), as that process sends it: followed
    by the live writer and written by :func:`write_open_logs` like a log captured here, within the same limit."""

    def update(self, text: str) -> None:
        """The whole log, as the other process has it now."""
        with self.lock:
            self.capped.clear()
            self.capped.add(text)

    def extend(self, piece: str) -> None:
        """One more piece of the log, as it was printed."""
        self.keep(piece)


@contextlib.contextmanager
def relay(sink: LogSink | None, key: TIKey, try_number: int) -> Iterator[RelayedLog]:
    """Keep a relayed try's log open while the try runs (written as it grows, and on a stop), and write its last
    text when it ends."""
    log = RelayedLog()
    if sink is None:
        yield log
        return
    _open[id(log)] = (sink, key, try_number, log)
    _start_live_writer()
    try:
        yield log
    finally:
        with _live_lock:
            ended = _open.pop(id(log), None) is not None
        if ended and log.size:
            sink.write(key, try_number, redact_text(log.text()))


def write_open_logs(reason: str) -> None:
    """Write the log of every try still capturing in this process, as far as it got, ending with ``reason``.

    For a process being stopped (local mode's stop, ECS's StopTask): the log is otherwise written only when the
    try ends, and a stopped try lost everything it had written. No lock is taken, since this runs in a signal
    handler that may have interrupted a holder.
    """
    stamp = dt.datetime.now(dt.UTC).isoformat()
    for token in list(_open):
        entry = _open.pop(token, None)
        if entry is None:
            continue
        sink, key, try_number, buffer = entry
        with contextlib.suppress(Exception):
            if buffer.catch_up is not None:  # what the try printed just before the stop is still on its way here
                buffer.catch_up()
            sink.write(key, try_number, redact_text(buffer.text_so_far()) + f"[{stamp}] {reason}\n")


def write_logs_on_sigterm() -> None:
    """On SIGTERM, write the open tries' logs (:func:`write_open_logs`), then exit as SIGTERM would."""

    def on_sigterm(signum: int, frame: Any) -> None:
        write_open_logs(f"the process running this try was stopped ({signal.Signals(signum).name}) "
                        f"before the try ended")
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)


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
        else:
            for flush in _flushers:
                flush()

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


class _MaskingFilter(logging.Filter):
    """Airflow's secrets masker as a logging filter: the record is masked in place, so every handler after it
    (the Lambda runtime's, which writes to the function's own log group) sees ``***`` too."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact_text(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        return True


_masking_filter = _MaskingFilter()


def _install() -> None:
    """Wrap the process's streams (again, if something such as pytest replaced them) and add the handler once;
    every root handler masks secrets (handlers added later, by pytest or a task, get the filter on the next try)."""
    global _installed
    with _install_lock:
        if not isinstance(sys.stdout, _RoutingStream):
            sys.stdout = _RoutingStream(sys.stdout)
        if not isinstance(sys.stderr, _RoutingStream):
            sys.stderr = _RoutingStream(sys.stderr)
        for existing in logging.getLogger().handlers:
            if _masking_filter not in existing.filters:
                existing.addFilter(_masking_filter)
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
    """Route this thread's output into a buffer for the try; written to ``sink`` as it grows (while small) and
    whole when the try ends."""
    _install()
    buffer = _Buffer()
    previous = getattr(_local, "buffer", None)
    _local.buffer = buffer
    if sink is not None:
        _open[id(buffer)] = (sink, key, try_number, buffer)
        _start_live_writer()
    try:
        yield buffer
    finally:
        _local.buffer = previous
        with _live_lock:
            ended = sink is not None and _open.pop(id(buffer), None) is not None
        if sink is not None and ended:
            stamp = dt.datetime.now(dt.UTC).isoformat()
            buffer.keep(f"[{stamp}] end of try {try_number}\n")  # in the log's kept end, past any cut
            # Masked as a whole, once: a secret written in pieces, or learnt after it was printed (a connection
            # read after its URI was echoed), is still caught.
            sink.write(key, try_number, redact_text(buffer.text()))
