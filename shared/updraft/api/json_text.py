"""JSON text from clients, decoded only when it is safe to hold and to store: bounded nesting, valid Unicode.

``json.loads`` recurses once per nesting level, so a body of 100,000 ``[`` raises ``RecursionError`` (and a
value that decodes but nests ~1,000 deep breaks whatever walks it later: masking, ``json.dumps``); and it turns a
JSON escape ``"\\ud800"`` into a lone surrogate, a ``str`` that cannot be encoded as UTF-8, which DynamoDB's
client (and every other encoder) refuses. :func:`loads` checks both before anything else sees the value:

- nesting is counted by a scan of the text (brackets outside strings, no recursion) before decoding, so the
  decoder only ever sees text at most :data:`MAX_DEPTH` deep. No real conf, extra or variable nests 64 levels;
- a decoded string (or object key) holding a surrogate code point is refused, naming where it is. A valid
  surrogate pair (``"\\ud83d\\ude00"``) decodes to one character and passes.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 64  # levels of objects/arrays, the outermost counting as 1

# A JSON string (escapes included) or a bracket: the scan skips strings whole, so brackets inside them do not count.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
# What can decode to a surrogate: a \uD800-\uDFFF escape, or one already in the text.
_MAY_HOLD_SURROGATES = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}|[\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


class InvalidJson(ValueError):
    """Text that is not JSON Updraft takes: pydantic's error ``kind``, where (``loc``: a character position, or the
    path to the bad string within the value), a message, and the offending input (JSON-encodable).
    ``not_json``: the text is not JSON at all (rather than JSON nested too deep or holding a lone surrogate)."""

    def __init__(self, kind: str, loc: tuple[str | int, ...], msg: str, value: Any = None, *,
                 not_json: bool = False) -> None:
        super().__init__(msg)
        self.kind = kind
        self.loc = loc
        self.msg = msg
        self.value = value
        self.not_json = not_json


def _check_depth(text: str) -> None:
    depth = 0
    for token in _TOKENS.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise InvalidJson("json_invalid", (token.start(),),
                                  f"JSON decode error: nested deeper than {MAX_DEPTH} levels", {})
        elif char in "]}":
            depth -= 1


def lone_surrogate(text: str) -> str | None:
    """Why ``text`` is not valid Unicode (the first lone surrogate and where), or None when it is."""
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return f"invalid Unicode: lone surrogate U+{ord(found.group()):04X} at character {found.start()}"


def _printable(text: str) -> str:
    """``text`` with its surrogates as ``\\udXXX`` escapes: encodable, so it can go back in an answer."""
    return text.encode("utf-8", errors="backslashreplace").decode("utf-8")


def _check_unicode(value: Any) -> None:
    pending: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while pending:
        item, loc = pending.pop()
        if isinstance(item, str):
            if (problem := lone_surrogate(item)) is not None:
                raise InvalidJson("string_unicode", loc, problem, _printable(item))
        elif isinstance(item, dict):
            for key, child in item.items():
                if (problem := lone_surrogate(key)) is not None:
                    raise InvalidJson("string_unicode", (*loc, _printable(key)), f"key: {problem}", _printable(key))
                pending.append((child, (*loc, key)))
        elif isinstance(item, list):
            pending.extend((child, (*loc, index)) for index, child in enumerate(item))


def loads(text: str) -> Any:
    """The JSON value of ``text``; :class:`InvalidJson` when it is not JSON, nests deeper than :data:`MAX_DEPTH`
    or holds a lone surrogate. Never recurses deeper than :data:`MAX_DEPTH` levels."""
    _check_depth(text)
    try:
        value = json.loads(text)
    except ValueError as err:  # JSONDecodeError, or an integer over Python's digit limit
        raise InvalidJson("json_invalid", (getattr(err, "pos", 0),), "JSON decode error", {},
                          not_json=True) from None
    if _MAY_HOLD_SURROGATES.search(text):
        _check_unicode(value)
    return value
