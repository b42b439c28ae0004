"""What a DAG-file child leaves behind, and what it means: the record every side of the parser shares.

A child is forked by a :class:`~updraft.parsing.forker.Forker` (in the caller's process or in the fork server),
reaped into a :class:`Finished` record that stays undecoded (the fork server sends it down a pipe as is), and
decoded by the caller into a ``ParsedFile``: the child's own JSON result, or an import error explaining why there
is none (a timeout, a signal, the memory limit, a lost fork server).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
from dataclasses import dataclass

from updraft.model.parse_results import ImportErrorRecord, ParsedFile
from updraft.parsing.options import FileJob, ParseOptions

# Exit codes the child uses; anything else came from the DAG file itself.
EXIT_OK = 0
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 71


@dataclass
class Finished:
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


def file_hash(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return ""


def error_result(job: FileJob, record: ImportErrorRecord, duration_s: float = 0.0) -> ParsedFile:
    """The result of a file that defines nothing because of ``record``."""
    return ParsedFile(
        relative_path=job.relative_path,
        file_hash=file_hash(job.path),
        import_errors=[record],
        duration_s=duration_s,
        file_version=job.file_version,
    )


def decode_finished(finished: Finished, options: ParseOptions) -> ParsedFile:
    """Turn a reaped child into its ParsedFile, or into an import error if it crashed."""
    parsed: ParsedFile | None = None
    status = finished.status
    if not finished.killed_for_timeout and os.WIFEXITED(status) and os.WEXITSTATUS(status) == EXIT_OK:
        try:
            parsed = ParsedFile.from_dict(json.loads(finished.payload))
        except (ValueError, KeyError, TypeError):
            parsed = None
    if parsed is not None and parsed.relative_path != finished.job.relative_path:
        parsed = error_result(finished.job, _forged_record(finished, parsed.relative_path), finished.elapsed)
    if parsed is None:
        record = _crash_record(finished, options)
        parsed = error_result(finished.job, record, finished.elapsed)
    parsed.logs = finished.logs
    parsed.peak_rss_kb = finished.peak_rss_kb
    if not parsed.duration_s:
        parsed.duration_s = finished.elapsed
    return parsed


def _forged_record(finished: Finished, claimed: str) -> ImportErrorRecord:
    """A result that names another file than the one this child was asked to parse: refused.

    Only the file's own code can have written it (the parser writes the path it was given), so it is that
    file's import error, and the file it names keeps its stored DAGs.
    """
    rel = finished.job.relative_path
    message = (
        f"the process parsing {rel} reported a result for {claimed!r}; the result was refused "
        f"(a parse reports only for the file it was asked to parse)"
    )
    return ImportErrorRecord(filename=rel, lineno=None, message=message, stacktrace=message + "\n")


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _crash_record(finished: Finished, options: ParseOptions) -> ImportErrorRecord:
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
        elif sig == signal.SIGXCPU:
            message = (
                f"DAG file process for {rel} used more CPU time than the parse timeout allows "
                f"({options.timeout_s:g}s) and was stopped"
            )
        elif sig == signal.SIGKILL:
            message = (
                f"DAG file process for {rel} was killed (SIGKILL); this usually means it ran out of memory "
                f"(parse memory limit {options.memory_limit_mb} MiB)"
            )
        else:
            message = f"DAG file process for {rel} died from {_signal_name(sig)}"
    elif os.WEXITSTATUS(status) == EXIT_INTERRUPTED:
        message = f"parsing {rel} was interrupted: KeyboardInterrupt (raised by the file, or a Ctrl-C)"
    elif os.WEXITSTATUS(status) == EXIT_INTERNAL:
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
