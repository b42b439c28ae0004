"""The DAG-file child's side: what a forked child does before, while and after it runs one file.

The child first walls itself off (:func:`isolate`): its own session and process group (so the parent can kill
everything the file started), no descriptor but stdio and its own result pipe (the fork server's job and reply
pipes and the siblings' pipes stay out of reach), and no Updraft or AWS secret in its environment. It points its
stdout/stderr at its own capture, limits its memory (RLIMIT_AS), output (RLIMIT_FSIZE), processes
(RLIMIT_NPROC) and CPU time (RLIMIT_CPU), runs the file under a soft timeout (SIGALRM, which yields a traceback
pointing at the stuck line) and writes its result as JSON to a pipe. A process that only forks children (the fork
server) sets once, with :func:`prepare_forking_process`, what each child would otherwise set itself.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import math
import os
import resource
import signal
import sys
import traceback
from collections.abc import Callable

from updraft.model.parse_results import ImportErrorRecord, ParsedFile
from updraft.parsing.errors import ParseTimeout, record_from_exception
from updraft.parsing.options import FileJob, ParseOptions
from updraft.parsing.outcome import error_result
from updraft.parsing.scrub import scrub_environment
from updraft.reaper import become_subreaper

# Runs inside the child and returns what the file produced.
ChildTarget = Callable[[FileJob, ParseOptions], ParsedFile]


def default_target(job: FileJob, options: ParseOptions) -> ParsedFile:
    """Load the DAG file the way the parser does (the loader is warm in the forking process)."""
    # lazy: the parse child imports only what it runs (the fork server preloads the loader)
    from updraft.parsing.loader import load_dag_file

    return load_dag_file(job, options)


def _mapped_bytes() -> int:
    """This process's current address-space size (VmSize), 0 where /proc is not available."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def _line_stream(fd: int) -> io.TextIOWrapper:
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", line_buffering=True)


_current_job: FileJob | None = None
_current_timeout: float = 0.0


def _on_alarm(signum, frame):
    job = _current_job
    name = job.relative_path if job is not None else "the DAG file"
    raise ParseTimeout(f"DagBag import timeout for {name} after {_current_timeout:g}s")


def _close_inherited(keep: set[int]) -> None:
    """Close every descriptor above stdio except ``keep``.

    A forked child inherits all of its parent's descriptors: in the fork server, the job pipe and the pipe that
    carries results to the caller (a file once wrote a forged result for another file down it), and the read
    ends and captures of its sibling children.
    """
    low = 3
    for fd in sorted(keep):
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, _max_fd())


def _max_fd() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def user_tasks() -> int:
    """How many tasks (threads included) this user runs now: what RLIMIT_NPROC counts against.

    Scanning /proc costs milliseconds, so the forking process counts now and then (``Forker``), not each child.
    """
    uid = os.getuid()
    count = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid == uid:
                count += len(os.listdir(f"/proc/{entry}/task"))
        except OSError:
            continue
    return count


def isolate(result_fd: int, out_fd: int, options: ParseOptions, user_tasks_now: int) -> None:
    """Wall the child off from its parent before any user code runs (see the module docstring).

    ``setsid`` makes the child the leader of a new process group whose id is its pid: the parent kills that
    group when the parse ends, so nothing the file started (``subprocess.Popen``, a forked helper holding the
    result pipe) outlives it. A process that calls ``setsid`` again leaves the group but not the child's tree: the
    child is a subreaper (``updraft.reaper``), so the orphans of the file's processes come back to it, and it
    kills its tree as it ends (``Forker``). RLIMIT_NPROC limits how many processes there can be (the kernel does
    not apply it to root).
    """
    os.setsid()
    become_subreaper()  # what the file starts stays below the child, setsid and double forks included
    _close_inherited({result_fd, out_fd})
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the fork server's stdin is its job pipe
    os.close(devnull)
    scrub_environment(os.environ)
    if options.max_processes:
        cap = user_tasks_now + options.max_processes
        _soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        resource.setrlimit(resource.RLIMIT_NPROC, (cap, cap))
    # CPU seconds on top of the wall-clock timeout: a helper process the file left spinning is stopped too.
    cpu = math.ceil(options.timeout_s) + 1
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY or hard > cpu:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


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
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)
    signal.signal(signal.SIGALRM, _on_alarm)
    # Line buffering keeps stdout and stderr lines in the order they were printed.
    sys.stdout = _line_stream(1)
    sys.stderr = _line_stream(2)
    # A segfault in a DAG file (a C extension) then leaves its Python
    # traceback in the captured output, which the crash record shows.
    faulthandler.enable(file=sys.stderr)


def child_main(
    job: FileJob,
    options: ParseOptions,
    target: ChildTarget,
    result_fd: int,
    out_fd: int,
    prepared: bool = False,
    user_tasks_now: int = 0,
) -> None:
    """Everything the child does. Never returns: the caller ``os._exit``s."""
    global _current_job, _current_timeout
    _current_job, _current_timeout = job, options.timeout_s
    isolate(result_fd, out_fd, options, user_tasks_now)
    os.environ.update(job.env)  # the DAG-code role's credentials (none without one): never the parser's
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
        result = error_result(job, record)
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
        payload = json.dumps(error_result(job, record).to_dict()).encode()
    view = memoryview(payload)
    while view:
        written = os.write(result_fd, view)
        view = view[written:]
