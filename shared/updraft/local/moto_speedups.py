"""Two speed-ups for moto, applied wherever Updraft embeds moto (local mode, ``dags test``).

Its server lists moto's package directory (a ``listdir`` and ~60 ``stat`` calls) on every request to find the
backend for the host; the list never changes in a process, so it is computed once (~12% of a request's time).

moto 5.2 serializes every response by walking botocore's output shapes, member by member, and DynamoDB's
``AttributeValue`` is the worst case: each attribute of each item is a structure of ten members, so a Query
returning a run's 200 task instances costs ~100 ms of moto's time (measured), and moto serves one request at a
time. The items moto holds are already in DynamoDB's wire format (``{"S": ...}``, ``{"L": [...]}``), so they
are written as they are, with binary values base64-encoded as the JSON protocol requires; everything else still
goes through moto's serializer. ``tests/unit/local/test_moto_speedups.py`` checks the responses are identical.
"""

from __future__ import annotations

import base64
import threading
from typing import Any

from updraft.local.snapshot import map_binary

_lock = threading.Lock()
_applied = False


def wire_value(value: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB attribute value as the JSON protocol writes it (binaries base64-encoded)."""
    return map_binary(value, lambda b: base64.b64encode(b).decode() if isinstance(b, bytes | bytearray) else b)


def apply() -> None:
    """Patch moto's JSON serializer once per process (idempotent)."""
    global _applied
    with _lock:
        if _applied:
            return
        from moto.core.serialize import BaseJSONSerializer

        original = BaseJSONSerializer._serialize_type_structure

        def serialize_structure(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
            if key and shape.name == "AttributeValue" and isinstance(value, dict):
                serialized[key] = wire_value(value)
                return
            original(self, serialized, value, shape, key)

        BaseJSONSerializer._serialize_type_structure = serialize_structure  # type: ignore[method-assign]

        from moto import backends

        modules = tuple(backends.list_of_moto_modules())
        backends.list_of_moto_modules = lambda: modules  # type: ignore[assignment]
        _applied = True
