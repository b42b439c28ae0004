"""A try's rendered template fields, kept for the API and UI as Airflow keeps ``RenderedTaskInstanceFields``.

Right after rendering (before ``execute``, so a failed try shows what it ran), the worker serializes each template
field as Airflow's task runner does: JSON-safe values (tuples and sets as lists, dict keys as sorted strings, an
object with ``serialize()`` through it, a callable as ``<callable module.name>``, anything else as its ``str``),
a field longer than ``[core] max_templated_field_length`` (default 4096) as Airflow's truncation message, and every
value through the secrets masker (connection passwords, sensitive variables, ``mask_secret`` values, and whole
values under sensitive names). Dotted ``template_fields_renderers`` paths (``env.PASSWORD``) are added as Airflow
adds them.

The result lives on the task instance's DynamoDB item, so the whole is also held within ``RENDERED_FIELDS_BUDGET``
bytes (items are limited to 400 KB): when the fields together exceed it, the largest are truncated further.

The child hands the fields to its worker (``store_proxy``), which holds them (:class:`HeldFields`): the try's end
write carries them when the try ends within ``HOLD_S``, else their own write lands at ``HOLD_S``. So the child
does not wait for a write before ``execute`` (a round trip off every try's time), a short try costs one write
fewer, and a running try's fields show in the API and UI at most ``HOLD_S`` after it rendered them (Airflow's
show at once).
"""

from __future__ import annotations

import inspect
import json
import logging
import math
import threading
from collections.abc import Mapping
from typing import Any

from updraft import airflow_config
from updraft.executors.base import Dispatch
from updraft.model.records import TIKey
from updraft.secrets.masker import redact
from updraft.store.api import Store

log = logging.getLogger(__name__)

DEFAULT_MAX_LENGTH = 4096
TRUNCATE_MIN_CONTENT_LENGTH = 7
TRUNCATE_PREFIX = "Truncated. You can change this behaviour in [core]max_templated_field_length. "
TRUNCATE_SUFFIX = "..."
# Bytes of JSON the fields may take on the task instance item: well inside DynamoDB's 400 KB with the rest of it.
RENDERED_FIELDS_BUDGET = 64 * 1024
# Seconds a try's fields wait in its worker for the try's end to carry them before they get a write of their own.
HOLD_S = 1.0


def truncate_rendered_value(rendered: str, max_length: int) -> str:
    """Airflow's ``truncate_rendered_value``: the prefix, as much of ``rendered`` as fits in ``max_length``, the
    suffix; the bare message when fewer than 7 characters of content would fit; "" when ``max_length`` <= 0."""
    if max_length <= 0:
        return ""
    message_only = f"{TRUNCATE_PREFIX}{TRUNCATE_SUFFIX}"
    available = max_length - len(message_only)
    if available < TRUNCATE_MIN_CONTENT_LENGTH:
        return message_only
    return f"{TRUNCATE_PREFIX}{rendered[:available].rstrip()}{TRUNCATE_SUFFIX}"


def _qualname(obj: Any) -> str:
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"{module}.{name}" if module else name


def json_safe(obj: Any) -> Any:
    """``obj`` as JSON values, deterministically (Airflow's ``serialize_object`` in its task runner)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)  # JSON has no NaN or Infinity
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if isinstance(obj, dict):
        pairs = [(str(json_safe(key)), json_safe(value)) for key, value in obj.items()]
        return dict(sorted(pairs, key=lambda pair: pair[0]))
    if isinstance(obj, (list, tuple)):
        return [json_safe(item) for item in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((json_safe(item) for item in obj), key=lambda x: (type(x).__name__, str(x)))
    if callable(inspect.getattr_static(obj, "serialize", None)):
        return json_safe(obj.serialize())
    if getattr(type(obj), "__module__", "").startswith(("kubernetes.", "kubernetes_asyncio.")) and callable(
            inspect.getattr_static(obj, "to_dict", None)):
        return json_safe(obj.to_dict())
    if callable(obj):
        return f"<callable {_qualname(obj)}>"
    if type(obj).__str__ is not object.__str__ or type(obj).__repr__ is not object.__repr__:
        return str(obj)
    return f"<{_qualname(type(obj))} object>"


def serialize_template_field(value: Any, name: str, max_length: int) -> Any:
    """One field as Airflow stores it: JSON-safe, redacted, and truncated when its text exceeds ``max_length``
    (redacted before it is cut, so the cut never leaves a partial secret behind)."""
    serialized = json_safe(value)
    if len(str(serialized)) > max_length:
        return truncate_rendered_value(str(redact(serialized, name)), max_length)
    return redact(serialized, name)


def _renderer_value(task: Any, path: str) -> Any:
    """The value a dotted ``template_fields_renderers`` path names inside a template field (None: absent)."""
    base, _, rest = path.partition(".")
    current = getattr(task, base, None)
    for part in rest.split("."):
        if current is None:
            return None
        current = current.get(part) if isinstance(current, dict) else getattr(current, part, None)
    return current


def serialize_rendered_fields(task: Any, *, max_length: int | None = None,
                              budget: int = RENDERED_FIELDS_BUDGET) -> dict[str, Any]:
    """Every template field of the (rendered) ``task``, plus its dotted renderer paths, ready to store."""
    if max_length is None:
        max_length = airflow_config.get_int("core", "max_templated_field_length", DEFAULT_MAX_LENGTH)
    fields = {name: serialize_template_field(getattr(task, name), name, max_length)
              for name in task.template_fields}
    for path in getattr(task, "template_fields_renderers", None) or {}:
        if "." in path and path.partition(".")[0] in task.template_fields:
            nested = _renderer_value(task, path)
            if nested is not None:
                fields[path] = serialize_template_field(nested, path, max_length)
    return fit_budget(fields, budget)


def _size(value: Any) -> int:
    return len(json.dumps(value))  # as the item stores it (ASCII-escaped), so characters are bytes


def fit_budget(fields: dict[str, Any], budget: int) -> dict[str, Any]:
    """``fields`` within ``budget`` bytes of JSON: while they exceed it, the largest is truncated to an equal
    share of what the names leave (a share too small for any content leaves Airflow's bare truncation message,
    so hundreds of fields may still exceed a small budget by that message each)."""
    fitted = dict(fields)
    share = (budget - _size(dict.fromkeys(fitted, ""))) // max(len(fitted), 1)
    smallest = len(TRUNCATE_PREFIX + TRUNCATE_SUFFIX) + TRUNCATE_MIN_CONTENT_LENGTH
    for name in sorted(fitted, key=lambda n: _size(fitted[n]), reverse=True):
        if _size(fitted) <= budget:
            break
        text, length = str(fitted[name]), share
        while True:
            candidate = truncate_rendered_value(text, length)
            if _size(candidate) <= share or length <= smallest:
                break
            length = length * share // _size(candidate) - 1  # escapes made it longer: shrink in proportion
        fitted[name] = candidate
    return fitted


def record_rendered_fields(store: Store, dispatch: Dispatch, task: Any) -> None:
    """Keep the rendered ``task``'s fields on its instance for this try (nothing for a task without fields, as
    Airflow sends none); a try that is no longer the live one is logged and its fields dropped."""
    fields = serialize_rendered_fields(task)
    if not fields:
        return
    if not store.set_rendered_fields(dispatch.key, try_id=dispatch.try_id, rendered_fields=fields):
        log.warning("rendered fields of %s try %s were refused: the try was ended elsewhere",
                    dispatch.key.label, dispatch.try_number)


class HeldFields:
    """A try's rendered fields as its worker holds them: taken by the try's end write (``take``) or, when the
    try runs past ``hold_s``, written by their own fenced write then; written once either way.

    Invariant: the own write and the end's ``take`` exclude each other, and ``take`` waits for a write in flight,
    so the end's write (fenced: it ends the try) never lands before the fields' own write (fenced on the try being
    live), which would refuse them. A failed own write puts the fields back for the end to carry."""

    def __init__(self, store: Store, key: TIKey, try_id: str, *, hold_s: float | None = None) -> None:
        self._store = store
        self._key = key
        self._try_id = try_id
        self._hold_s = HOLD_S if hold_s is None else hold_s
        self._lock = threading.Lock()
        self._fields: dict[str, Any] | None = None
        self._timer: threading.Timer | None = None

    def hold(self, fields: Mapping[str, Any]) -> None:
        """Keep ``fields`` (in place of any held), written after ``hold_s`` unless the end takes them first."""
        with self._lock:
            self._fields = dict(fields)
            if self._timer is None:
                self._timer = threading.Timer(self._hold_s, self.write)
                self._timer.daemon = True
                self._timer.start()

    def write(self) -> None:
        """Write what is held now, in its own write (refused when the try is no longer the live one: logged); the
        timer, if it has not fired, no longer will."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            fields, self._fields = self._fields, None
            if fields is None:
                return
            try:
                written = self._store.set_rendered_fields(self._key, try_id=self._try_id, rendered_fields=fields)
            except Exception:
                log.exception("rendered fields of %s: their write failed; the try's end carries them", self._key.label)
                self._fields = fields
                return
        if not written:
            log.warning("rendered fields of %s were refused: the try was ended elsewhere", self._key.label)

    def take(self) -> dict[str, Any] | None:
        """The fields held and not written (None: none, or written already), for the try's end write to carry;
        nothing is written by this holder afterwards."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            fields, self._fields = self._fields, None
            return fields
