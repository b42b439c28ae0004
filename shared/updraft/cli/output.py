"""Airflow's ``--output table|json|plain`` renderings (``AirflowConsole.print_as``).

Scripts written against ``airflow ... -o json`` should work against
``updraft ... -o json`` unchanged, and people used to Airflow's tables should
recognise them, so the shapes follow Airflow: a list of flat objects for JSON,
an ASCII table with a double-line header for ``table``, tabulate's ``plain``
layout for ``plain``, and ``No data found`` for an empty table.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

OUTPUT_FORMATS = ("table", "json", "plain")


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send what is written to standard output in the block to standard error: this process's ``print`` and the
    file descriptor 1 every process started in the block inherits (a task's child writing to it, a library
    printing a warning: moto prints Docker warnings there). A command whose output is one document
    (``-o json``) runs its work in the block and writes the document after it, alone on standard output."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _cell(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def _columns(rows: Sequence[dict[str, Any]]) -> list[str]:
    cols: list[str] = []
    for row in rows:
        for key in row:
            if key not in cols:
                cols.append(key)
    return cols


def render_table(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "No data found"
    cols = _columns(rows)
    cells = [[_cell(row.get(c, "")) for c in cols] for row in rows]
    widths = [len(c) for c in cols]
    for line in cells:
        for i, value in enumerate(line):
            widths[i] = max(widths[i], *(len(part) for part in value.split("\n")))
    out = [" | ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()]
    out.append("=+=".join("=" * w for w in widths))
    for line in cells:
        split = [value.split("\n") for value in line]
        height = max(len(s) for s in split)
        for k in range(height):
            parts = [(s[k] if k < len(s) else "").ljust(w) for s, w in zip(split, widths, strict=True)]
            out.append(" | ".join(parts).rstrip())
    return "\n".join(out)


def render_plain(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return ""
    cols = _columns(rows)
    cells = [[_cell(row.get(c, "")).replace("\n", " ") for c in cols] for row in rows]
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip() for line in cells]
    return "\n".join(lines)


def render_json(rows: Sequence[dict[str, Any]]) -> str:
    return json.dumps(list(rows), indent=2, default=str)


def render(rows: Sequence[dict[str, Any]], output: str) -> str:
    if output == "json":
        return render_json(rows)
    if output == "plain":
        return render_plain(rows)
    return render_table(rows)
