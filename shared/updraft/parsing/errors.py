"""Turning whatever went wrong in a DAG file into an import error the user can act on.

Users need three things from an import error: which file, which line of *their*
code, and a traceback that starts in their code rather than in the parser's
machinery. Airflow keeps only the last two frames; Updraft keeps every frame
from the first one inside the DAG file onwards, which shows the user's call
chain into sibling modules without the loader noise above it.
"""

from __future__ import annotations

import traceback
from types import TracebackType

from updraft.model.parse_results import ImportErrorRecord


class ParseTimeout(BaseException):
    """Raised inside the child when the DAG file runs past the parse timeout.

    It derives from BaseException so that a DAG file's own ``except Exception``
    cannot swallow it; a file that also swallows BaseException is still
    stopped by the parent's SIGKILL shortly after.
    """


def _first_frame_in(tb: TracebackType | None, path: str) -> TracebackType | None:
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            return tb
        tb = tb.tb_next
    return None


def format_exception_message(exc: BaseException) -> str:
    """The one-line form Airflow uses for import errors: ``ExcType: message``."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def record_from_exception(
    exc: BaseException,
    *,
    path: str,
    relative_path: str,
    dag_id: str | None = None,
    hint: str | None = None,
) -> ImportErrorRecord:
    """Build an import error for ``exc`` raised while running the DAG file at ``path``.

    ``path`` must be the exact string the file was compiled with, so frames in
    the DAG file can be recognised without touching the filesystem.
    """
    lineno: int | None = None
    if isinstance(exc, SyntaxError) and exc.filename == path:
        lineno = exc.lineno
    frames: list[traceback.FrameSummary] = traceback.extract_tb(exc.__traceback__)
    in_file = [f for f in frames if f.filename == path]
    if lineno is None and in_file:
        lineno = in_file[-1].lineno

    start = _first_frame_in(exc.__traceback__, path)
    if start is None and isinstance(exc, SyntaxError):
        # A syntax error in the file itself: only the parser's frames are on the
        # stack, and the useful part is the caret display of the bad line.
        stack = "".join(traceback.format_exception_only(type(exc), exc))
    elif isinstance(exc, ParseTimeout):
        # The last frame is the alarm handler that raised; the user wants the
        # line their code was stuck on, which is the one before it.
        frames = traceback.extract_tb(start if start is not None else exc.__traceback__)[:-1]
        stack = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
        stack += "".join(traceback.format_exception_only(type(exc), exc))
    else:
        tb = start if start is not None else exc.__traceback__
        stack = "".join(traceback.format_exception(type(exc), exc, tb))

    message = format_exception_message(exc)
    if hint:
        message = f"{message} ({hint})"
        stack = f"{stack.rstrip()}\n{hint}\n"
    return ImportErrorRecord(
        filename=relative_path, lineno=lineno, message=message, stacktrace=stack, dag_id=dag_id
    )
