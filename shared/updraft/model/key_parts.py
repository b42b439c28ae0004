"""How a user-chosen name becomes one part of a composite key: the one home of key escaping.

Keys join names with a separator (``#`` in item keys, ``:`` in limit ids, ``|`` in holder ids, ``/`` in S3 keys),
and many names may contain it (pool names, variable keys, XCom keys, partition keys are free text; a DAG file can
set a dag_id or task_id after its check), so a plain join is not injective: pool ``victim#1`` was the item of pool
``victim``'s shard 1. A layout's ``escaper`` percent-encodes its separators and ``%`` itself in each part, so a
part never contains a bare separator and distinct names always give distinct keys; ``unescape`` is its exact
inverse, for code that splits a key back into names.

A name holding none of those characters is returned unchanged, so the keys of such names (every valid dag_id,
task_id and run_id, and almost every other name) are what they were before escaping existed, byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Callable

ESCAPE = "%"
_ESCAPED = re.compile(r"%([0-9A-F]{2})")


def _table(separators: str) -> dict[int, str]:
    if not separators or any(ord(c) > 0x7F for c in separators) or ESCAPE in separators:
        raise ValueError(f"separators must be ASCII characters other than {ESCAPE!r}: {separators!r}")
    return {ord(c): f"%{ord(c):02X}" for c in ESCAPE + separators}


def escaper(separators: str) -> Callable[[str], str]:
    """The escaping of a layout whose parts are separated by any of ``separators`` (ASCII characters): it turns
    a name into a part by writing each of them and ``%`` as ``%XX`` (upper-case hex), and returns a name with none
    of them as it is. Made once per layout: the common case costs two substring checks, no copy."""
    table = _table(separators)
    if len(separators) == 1:
        def escape_one(name: str) -> str:
            if ESCAPE not in name and separators not in name:
                return name
            return name.translate(table)
        return escape_one

    def escape_any(name: str) -> str:
        if ESCAPE not in name and not any(c in name for c in separators):
            return name
        return name.translate(table)
    return escape_any


def unescape(part: str) -> str:
    """The name an escaper made ``part`` of (whatever its separators: every ``%`` in a part starts an escape)."""
    if ESCAPE not in part:
        return part
    return _ESCAPED.sub(lambda m: chr(int(m[1], 16)), part)
