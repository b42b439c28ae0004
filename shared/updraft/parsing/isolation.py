"""Run each DAG file in its own forked child of a warm process.

Why this shape: Airflow's dag-processor pays ~50-70 ms per file because every
file gets a fresh interpreter that imports Airflow again. Here a warm process
(normally the fork server, see ``forkserver``) imports the SDK, pendulum and
the serializer once (it never imports user code), then ``fork()``s one child
per file. The child starts with everything already imported, runs only the
user's file under a timeout (SIGALRM, then SIGKILL from the parent) and a
memory limit (RLIMIT_AS), with its stdout/stderr captured, writes its result
as JSON to a pipe and leaves with ``os._exit``. A crash, a runaway loop or a
memory hog takes down only its own child; the parent turns that into an
import error and carries on with the other files.
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import hashlib
import importlib
import io
import json
import os
import resource
import selectors
import signal
import sys
import tempfile
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from updraft.model.parse_results import ImportErrorRecord, ParsedFile
from updraft.parsing.errors import ParseTimeout, record_from_exception
from updraft.parsing.options import FileJob, ParseOptions

# Runs inside the child and returns what the file produced.
ChildTarget = Callable[[FileJob, ParseOptions], ParsedFile]

# Modules a DAG file is likely to import. Importing them in the parent means a
# child finds them in sys.modules instead of paying their import per file.
# They are Updraft's own modules (the SDK and its Airflow-compatible paths),
# never user code.
WARM_MODULES = (
    "pendulum",
    "updraft.sdk",
    "updraft.serialization",
    "updraft.parsing.loader",
    "airflow",
    "airflow.sdk",
    "airflow.exceptions",
    "airflow.decorators",
    "airflow.models",
    "airflow.models.dag",
    "airflow.models.baseoperator",
    "airflow.models.param",
    "airflow.utils.task_group",
    "airflow.utils.trigger_rule",
    "airflow.utils.dates",
    "airflow.operators.empty",
    "airflow.operators.bash",
    "airflow.operators.python",
    "airflow.providers.standard.operators.empty",
    "airflow.providers.standard.operators.bash",
    "airflow.providers.standard.operators.python",
    "airflow.providers.standard.sensors.time_delta",
    "airflow.providers.standard.sensors.date_time",
    "airflow.providers.standard.sensors.python",
    "airflow.timetables.base",
    "airflow.timetables.interval",
    "airflow.timetables.trigger",
    "airflow.timetables.simple",
    "airflow.timetables.events",
    "updraft.timetables.registry",
)

# Exit codes the child uses; anything else came from the DAG file itself.
_EXIT_OK = 0
_EXIT_INTERNAL = 70
_EXIT_INTERRUPTED = 71

# After the soft timeout (SIGALRM inside the child, which yields a traceback
# pointing at the stuck line) the parent waits this long before SIGKILL.
_KILL_GRACE_S = 0.5


_warmed = False
_WARM_UP_RUNS = 10


def _mapped_bytes() -> int:
    """This process's current address-space size (VmSize), 0 where /proc is not available."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0

def warm_up(modules: Sequence[str] = WARM_MODULES) -> list[str]:
    """Import what DAG files commonly need, once, in the parent.

    Modules that do not exist (yet) are skipped: a missing compatibility path
    must show up as an import error in the DAG file that uses it, not stop the
    parser. Returns the modules that could not be imported, for diagnostics.
    """
    global _warmed
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:
            missing.append(name)
    try:
        from updraft.parsing.loader import warm_up_dry_run

        # Several runs, not one: Python 3.11 specialises bytecode only after a
        # function has run a few times, and a child that specialises it writes
        # to (so copies) the code object's pages.
        for _ in range(_WARM_UP_RUNS):
            warm_up_dry_run()
    except Exception:
        missing.append("updraft.parsing.loader.warm_up_dry_run")
    _warmed = True
    return missing


def _default_target(job: FileJob, options: ParseOptions) -> ParsedFile:
    from updraft.parsing.loader import load_dag_file

    return load_dag_file(job, options)


def file_hash(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return ""


# --------------------------------------------------------------------------- child side


def _new_capture() -> int:
    """An anonymous in-memory file for the child's stdout/stderr.

    The parent keeps its own descriptor, so it can still read what a child
    printed after that child was killed (timeouts, crashes).
    """
    try:
        return os.memfd_create("updraft-parse-output")
    except (AttributeError, OSError):  # pragma: no cover - non-Linux fallback
        fd, name = tempfile.mkstemp(prefix="updraft-parse-")
        os.unlink(name)
        return fd


def _line_stream(fd: int) -> io.TextIOWrapper:
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", line_buffering=True)


_current_job: FileJob | None = None
_current_timeout: float = 0.0


def _on_alarm(signum, frame):
    job = _current_job
    name = job.relative_path if job is not None else "the DAG file"
    raise ParseTimeout(f"DagBag import timeout for {name} after {_current_timeout:g}s")


def prepare_forking_process() -> None:
    """Set, once in a process that only forks DAG-file children, what each child would set.

    Every object a child creates or changes costs it copy-on-write page
    faults, the dominant per-file cost here; so the fork server sets signal
    dispositions, line-buffered streams on fd 1/2 and faulthandler up front,
    and each child only points fd 1/2 at its own capture.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Python ignores SIGXFSZ, which would turn "printed too much" into an
    # OSError the file could catch; dying from it gives one clear message.
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    signal.signal(signal.SIGALRM, _on_alarm)
    # Line buffering keeps stdout and stderr lines in the order they were printed.
    sys.stdout = _line_stream(1)
    sys.stderr = _line_stream(2)
    # A segfault in a DAG file (a C extension) then leaves its Python
    # traceback in the captured output, which the crash record shows.
    faulthandler.enable(file=sys.stderr)


def _child_main(
    job: FileJob,
    options: ParseOptions,
    target: ChildTarget,
    result_fd: int,
    out_fd: int,
    prepared: bool = False,
) -> None:
    """Everything the child does. Never returns: the caller ``os._exit``s."""
    global _current_job, _current_timeout
    _current_job, _current_timeout = job, options.timeout_s
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.close(out_fd)
    if not prepared:
        # Forked from an arbitrary process (tests, custom targets): its streams
        # may not write to fd 1/2 at all (a test runner's capture).
        prepare_forking_process()

    if options.memory_limit_mb:
        # On top of what the forking process already maps: the limit is what the DAG file itself may use, so it
        # holds the same whether the child comes from the lean fork server or from a large host process.
        limit = _mapped_bytes() + options.memory_limit_mb * 1024 * 1024
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    if options.max_output_mb:
        cap = options.max_output_mb * 1024 * 1024
        _soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        if hard == resource.RLIM_INFINITY or hard >= cap:
            resource.setrlimit(resource.RLIMIT_FSIZE, (cap, hard))

    signal.setitimer(signal.ITIMER_REAL, options.timeout_s)
    try:
        result = target(job, options)
    except ParseTimeout as exc:  # fired outside the file's own code (e.g. in serialization)
        record = record_from_exception(exc, path=job.path, relative_path=job.relative_path)
        result = _error_result(job, record)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()

    try:
        payload = json.dumps(
            result.to_dict(), separators=(",", ":"), allow_nan=False, check_circular=False
        ).encode()
    except (TypeError, ValueError, RecursionError) as exc:
        record = ImportErrorRecord(
            filename=job.relative_path,
            lineno=None,
            message=f"Updraft could not encode the parse result as JSON: {exc}",
            stacktrace=traceback.format_exc(),
        )
        payload = json.dumps(_error_result(job, record).to_dict()).encode()
    view = memoryview(payload)
    while view:
        written = os.write(result_fd, view)
        view = view[written:]


# --------------------------------------------------------------------------- parent side


@dataclass
class _Child:
    index: int
    job: FileJob
    pid: int
    result_fd: int
    out_fd: int
    started: float
    deadline: float
    buffer: bytearray = field(default_factory=bytearray)
    killed_for_timeout: bool = False


@dataclass
class _Finished:
    """A reaped child, its result still undecoded (JSON-able, so a fork server can send it)."""

    index: int
    job: FileJob
    killed_for_timeout: bool
    status: int
    peak_rss_kb: int
    elapsed: float
    logs: str
    payload: bytes
    # Set when the result was lost for a reason of the parser's own (the
    # fork server died): explains the import error instead of an exit code.
    note: str | None = None


def _error_result(job: FileJob, record: ImportErrorRecord, duration_s: float = 0.0) -> ParsedFile:
    return ParsedFile(
        relative_path=job.relative_path,
        file_hash=file_hash(job.path),
        import_errors=[record],
        duration_s=duration_s,
        file_version=job.file_version,
    )


def _read_output(fd: int, limit: int) -> str:
    """What the child printed, keeping the end (where errors are) if it is long."""
    try:
        size = os.fstat(fd).st_size
        if size <= limit:
            data = os.pread(fd, size, 0)
            prefix = b""
        else:
            data = os.pread(fd, limit, size - limit)
            prefix = f"[... {size - limit} bytes of earlier output dropped ...]\n".encode()
    except OSError:
        return ""
    return (prefix + data).decode("utf-8", errors="replace")


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _crash_record(finished: _Finished, options: ParseOptions) -> ImportErrorRecord:
    rel = finished.job.relative_path
    status, logs = finished.status, finished.logs
    if finished.note:
        message = finished.note
    elif finished.killed_for_timeout:
        message = (
            f"DagBag import timeout for {rel} after {options.timeout_s:g}s: the file did not finish "
            f"and was killed (raise the limit with --parse-timeout)"
        )
    elif os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGSEGV:
            message = f"Received SIGSEGV signal while processing {rel}."
        elif sig == signal.SIGXFSZ:
            message = (
                f"DAG file {rel} wrote more than {options.max_output_mb} MiB to stdout/stderr "
                f"while parsing and was stopped"
            )
        elif sig == signal.SIGKILL:
            message = (
                f"DAG file process for {rel} was killed (SIGKILL); this usually means it ran out of memory "
                f"(parse memory limit {options.memory_limit_mb} MiB)"
            )
        else:
            message = f"DAG file process for {rel} died from {_signal_name(sig)}"
    elif os.WEXITSTATUS(status) == _EXIT_INTERRUPTED:
        message = f"parsing {rel} was interrupted: KeyboardInterrupt (raised by the file, or a Ctrl-C)"
    elif os.WEXITSTATUS(status) == _EXIT_INTERNAL:
        message = (
            f"the parser failed inside the process for {rel} before it could report a result; "
            f"this usually means the file exhausted the parse memory limit of {options.memory_limit_mb} MiB"
        )
    else:
        code = os.WEXITSTATUS(status)
        message = f"DAG file process for {rel} exited with code {code} before reporting a result"
    tail = _output_excerpt(logs).strip()
    stack = message + (f"\n\nOutput before it stopped:\n{tail}\n" if tail else "\n")
    return ImportErrorRecord(filename=rel, lineno=None, message=message, stacktrace=stack)


def _output_excerpt(logs: str, limit: int = 4000) -> str:
    """Cut a dead child's output to ``limit`` characters, keeping what explains the death.

    faulthandler prints the crashing frame first and then every caller, so under a deep
    stack (pytest, a framework) a plain tail would keep the outermost frames and drop
    the user's line; keep the start of the dump and a little output before it instead.
    """
    if len(logs) <= limit:
        return logs
    dump_at = logs.rfind("Fatal Python error")
    if dump_at < 0:
        return "[...]\n" + logs[-limit:]
    before = logs[:dump_at][-limit // 4 :]
    dump = logs[dump_at : dump_at + limit - len(before)]
    cut_before = "[...]\n" if dump_at > len(before) else ""
    cut_after = "\n[...]" if dump_at + len(dump) < len(logs) else ""
    return f"{cut_before}{before}{dump}{cut_after}"


class Forker:
    """Forks one child per job from *this* process and multiplexes them.

    Runs either in the caller's process (``fork_server=False``) or inside the
    fork server, a separate lean process whose size never grows with results.
    """

    def __init__(self, options: ParseOptions, target: ChildTarget, *, prepared: bool = False) -> None:
        self.options = options
        self.target = target
        self.prepared = prepared
        self.selector = selectors.DefaultSelector()
        self.running: dict[int, _Child] = {}

    def spawn(self, index: int, job: FileJob) -> None:
        read_fd, write_fd = os.pipe()
        out_fd = _new_capture()
        # Keeps the parent's own output ordered around the children's work.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # child
            code = _EXIT_INTERNAL
            try:
                os.close(read_fd)
                _child_main(job, self.options, self.target, write_fd, out_fd, self.prepared)
                code = _EXIT_OK
            except KeyboardInterrupt:  # re-raised by the loader, as Airflow does: not an internal failure
                code = _EXIT_INTERRUPTED
                with contextlib.suppress(BaseException):
                    traceback.print_exc()
            except BaseException:
                with contextlib.suppress(BaseException):
                    traceback.print_exc()
            finally:
                os._exit(code)
        os.close(write_fd)
        deadline = started + self.options.timeout_s + _KILL_GRACE_S + 0.05 * self.options.timeout_s
        child = _Child(index, job, pid, read_fd, out_fd, started, deadline)
        self.running[read_fd] = child
        self.selector.register(read_fd, selectors.EVENT_READ, child)

    def next_deadline(self) -> float | None:
        return min((c.deadline for c in self.running.values()), default=None)

    def handle(self, key: selectors.SelectorKey) -> _Finished | None:
        """Read from a ready child pipe; the finished result once it hits EOF."""
        child = key.data
        # A pipe never holds more than 64 KiB; a bigger buffer only costs an mmap.
        chunk = os.read(child.result_fd, 65536)
        if chunk:
            child.buffer += chunk
            return None
        return self._reap(child)

    def kill_overdue(self) -> list[_Finished]:
        now = time.monotonic()
        done = []
        for child in [c for c in self.running.values() if now >= c.deadline]:
            child.killed_for_timeout = True
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)
            done.append(self._reap(child))
        return done

    def close(self) -> None:
        for child in list(self.running.values()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child.pid, 0)
            os.close(child.result_fd)
            os.close(child.out_fd)
        self.running.clear()
        self.selector.close()

    def _reap(self, child: _Child) -> _Finished:
        self.selector.unregister(child.result_fd)
        del self.running[child.result_fd]
        _pid, status, usage = os.wait4(child.pid, 0)
        elapsed = time.monotonic() - child.started
        os.close(child.result_fd)
        logs = _read_output(child.out_fd, self.options.max_log_bytes)
        os.close(child.out_fd)
        return _Finished(
            child.index,
            child.job,
            child.killed_for_timeout,
            status,
            usage.ru_maxrss,
            elapsed,
            logs,
            bytes(child.buffer),
        )

    def run(self, jobs: Sequence[FileJob]) -> Iterator[_Finished]:
        """Run every job, ``workers`` at a time, yielding results as children finish."""
        queue = deque(range(len(jobs)))
        # Objects alive now are never freed in a child: freezing them keeps the
        # collector from touching (and so copying) the parent's pages after fork.
        gc.freeze()
        try:
            while queue or self.running:
                while queue and len(self.running) < self.options.workers:
                    index = queue.popleft()
                    self.spawn(index, jobs[index])
                deadline = self.next_deadline()
                wait = max(0.0, deadline - time.monotonic()) if deadline is not None else None
                for key, _events in self.selector.select(wait):
                    finished = self.handle(key)
                    if finished is not None:
                        yield finished
                yield from self.kill_overdue()
        finally:
            self.close()
            gc.unfreeze()


def decode_finished(finished: _Finished, options: ParseOptions) -> ParsedFile:
    """Turn a reaped child into its ParsedFile, or into an import error if it crashed."""
    parsed: ParsedFile | None = None
    status = finished.status
    if not finished.killed_for_timeout and os.WIFEXITED(status) and os.WEXITSTATUS(status) == _EXIT_OK:
        try:
            parsed = ParsedFile.from_dict(json.loads(finished.payload))
        except (ValueError, KeyError, TypeError):
            parsed = None
    if parsed is None:
        record = _crash_record(finished, options)
        parsed = _error_result(finished.job, record, finished.elapsed)
    parsed.logs = finished.logs
    parsed.peak_rss_kb = finished.peak_rss_kb
    if not parsed.duration_s:
        parsed.duration_s = finished.elapsed
    return parsed


class IsolatedParser:
    """A warm parser: import once, fork per file.

    By default the forking happens in a fork server: a separate Python process
    started once, which imports the SDK and never holds any result, so the
    cost of each ``fork()`` (proportional to the forking process's memory on
    this kind of VM) stays flat however many DAGs the caller accumulates. Keep
    one instance alive where files are parsed repeatedly (a warm Lambda
    container, the benchmark's re-parse of one changed file) so only the
    first call pays the start-up. A custom ``target`` (tests) forks from this
    process directly.
    """

    def __init__(
        self,
        options: ParseOptions | None = None,
        *,
        target: ChildTarget | None = None,
        warm: bool = True,
        fork_server: bool | None = None,
    ) -> None:
        self.options = options or ParseOptions()
        self.target = target or _default_target
        self.fork_server = (target is None) if fork_server is None else fork_server
        if self.fork_server and target is not None:
            raise ValueError("a custom target cannot run in the fork server")
        self._client = None
        if self.fork_server:
            from updraft.parsing.forkserver import ForkServerClient

            self._client = ForkServerClient(self.options)
            if warm:
                self._client.start()
        elif warm and not _warmed:
            warm_up()

    def close(self) -> None:
        """Stop the fork server (it also stops by itself when this process exits)."""
        if self._client is not None:
            self._client.close()

    def __enter__(self) -> IsolatedParser:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def parse(self, jobs: Sequence[FileJob]) -> list[ParsedFile]:
        """Parse every job; results come back in the order of ``jobs``.

        With a fork server, results are decoded as they arrive (overlapping
        the children's work). Forking from this process, they stay raw JSON
        until every child is done: decoded DAGs are several times larger than
        their JSON, and a bigger forking process makes every ``fork()`` slower.
        """
        eager = self._client is not None
        out: list[ParsedFile | _Finished | None] = [None] * len(jobs)
        for finished in self._iter_finished(jobs):
            out[finished.index] = decode_finished(finished, self.options) if eager else finished
        return [r if isinstance(r, ParsedFile) else decode_finished(r, self.options) for r in out if r is not None]

    def parse_one(self, job: FileJob) -> ParsedFile:
        return self.parse([job])[0]

    def iter_parse(self, jobs: Sequence[FileJob]) -> Iterator[tuple[int, ParsedFile]]:
        """Yield ``(index, result)`` as files finish, at most ``workers`` at a time."""
        for finished in self._iter_finished(jobs):
            yield finished.index, decode_finished(finished, self.options)

    def _iter_finished(self, jobs: Sequence[FileJob]) -> Iterator[_Finished]:
        if self._client is not None:
            yield from self._client.run(jobs)
        else:
            yield from Forker(self.options, self.target).run(jobs)


_shared: dict[ParseOptions, IsolatedParser] = {}


def shared_parser(options: ParseOptions | None = None) -> IsolatedParser:
    """One warm parser per set of options for this process's lifetime.

    A warm Lambda container, a test session or a CLI command that parses
    several times reuses the same fork server instead of starting another.
    """
    options = options or ParseOptions()
    parser = _shared.get(options)
    if parser is None:
        parser = _shared[options] = IsolatedParser(options)
    return parser


def parse_files(
    jobs: Sequence[FileJob],
    options: ParseOptions | None = None,
    *,
    target: ChildTarget | None = None,
) -> list[ParsedFile]:
    """One-shot convenience: the shared warm parser, or a direct one for a custom target."""
    if target is None:
        return shared_parser(options).parse(jobs)
    return IsolatedParser(options, target=target).parse(jobs)
