"""Airflow's secrets masker: values known to be secret are replaced by ``***`` wherever Updraft shows text.

Airflow masks a connection's password and sensitive ``extra`` fields, a variable whose key contains a sensitive
word, and whatever a task passes to ``mask_secret()``. Updraft keeps the same rules: the same sensitive words
(``AIRFLOW__CORE__SENSITIVE_VAR_CONN_NAMES`` adds to them), the same minimum length (a secret shorter than
``AIRFLOW__LOGGING__MIN_LENGTH_MASKED_SECRET``, default 5, is not masked: it would blank out ordinary words), and
the URL-encoded forms of a secret, since a password usually reaches a log inside a connection URI.

One masker per process, as in Airflow: local mode runs tries in threads of one process, and a secret one try
learnt is masked in every log written afterwards, which errs on the side of hiding.
"""

from __future__ import annotations

import collections.abc
import re
import threading
from typing import Any
from urllib.parse import quote, quote_plus

from updraft import airflow_config

__all__ = ["DEFAULT_SENSITIVE_FIELDS", "REPLACEMENT", "mask_secret", "merge", "redact", "redact_text", "reset_masker",
           "secret_spans", "should_hide_value_for_key"]

DEFAULT_SENSITIVE_FIELDS = frozenset({
    "access_key", "access_token", "api_key", "apikey", "auth_header", "authorization", "bearer",
    "connection_string", "dsn", "passphrase", "passwd", "password", "private_key", "proxy", "proxy_password",
    "proxies", "secret", "service_account", "service_key", "token", "keyfile_dict", "webhook_url",
})
# Words Airflow never masks (they are everywhere in its own output).
SECRETS_TO_SKIP_MASKING = frozenset({"airflow"})
REPLACEMENT = "***"
MAX_RECURSION_DEPTH = 5
DEFAULT_MIN_LENGTH = 5


def _sensitive_fields() -> frozenset[str]:
    extra = airflow_config.get("core", "sensitive_var_conn_names", "")
    return DEFAULT_SENSITIVE_FIELDS | {part.strip().lower() for part in extra.split(",") if part.strip()}


def _min_length() -> int:
    return airflow_config.get_int("logging", "min_length_masked_secret", DEFAULT_MIN_LENGTH)


class SecretsMasker:
    """The registered secrets and one compiled pattern that finds any of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.patterns: set[str] = set()
        self.replacer: re.Pattern[str] | None = None

    def should_hide_value_for_key(self, name: object) -> bool:
        """Whether ``name`` (a variable key, an ``extra`` field) holds a secret: Airflow's substring rule."""
        if not isinstance(name, str):
            return False
        normalized = re.sub(r"\W+", "_", name.strip().lower())
        return any(word in normalized for word in _sensitive_fields())

    def add_mask(self, secret: Any, name: str | None = None) -> None:
        """Mask ``secret`` from now on (a dict: its values under sensitive keys; an iterable: each item)."""
        if isinstance(secret, dict):
            for key, value in secret.items():
                self.add_mask(value, key)
        elif isinstance(secret, str):
            if name and not self.should_hide_value_for_key(name):
                return
            min_length = _min_length()
            forms = {secret, quote(secret, safe=""), quote_plus(secret), quote(secret)}
            new = {re.escape(form) for form in forms
                   if len(form) >= min_length and form.lower() not in SECRETS_TO_SKIP_MASKING}
            with self._lock:
                if new - self.patterns:
                    self.patterns |= new
                    # Longest first, so a secret's encoded form is replaced whole, not around a shorter one.
                    self.replacer = re.compile("|".join(sorted(self.patterns, key=len, reverse=True)))
        elif isinstance(secret, collections.abc.Iterable):
            for item in secret:
                self.add_mask(item, name)
        elif secret is not None and not isinstance(secret, bool):
            self.add_mask(str(secret), name)

    def redact_text(self, text: str) -> str:
        replacer = self.replacer
        return replacer.sub(REPLACEMENT, text) if replacer is not None else text

    def secret_spans(self, text: str) -> list[tuple[int, int]]:
        replacer = self.replacer
        return [match.span() for match in replacer.finditer(text)] if replacer is not None else []

    def redact(self, item: Any, name: str | None = None, depth: int = 0) -> Any:
        """``item`` with every registered secret replaced, and every value under a sensitive key hidden whole."""
        if name and self.should_hide_value_for_key(name):
            return self._redact_all(item, depth)
        if isinstance(item, dict):
            return {key: self.redact(value, key, depth + 1) for key, value in item.items()}
        if isinstance(item, (tuple, set)):
            return tuple(self.redact(value, None, depth + 1) for value in item)
        if isinstance(item, list):
            return [self.redact(value, None, depth + 1) for value in item]
        if depth > MAX_RECURSION_DEPTH:
            return item
        if isinstance(item, str):
            return self.redact_text(item)
        return item

    def _redact_all(self, item: Any, depth: int) -> Any:
        """Every string under a sensitive key hidden, containers walked (a set comes back as a tuple), other values
        (numbers, booleans, None) kept: Airflow's ``_redact_all``, so a hidden value keeps its shape."""
        if depth > MAX_RECURSION_DEPTH or isinstance(item, str):
            return REPLACEMENT
        if isinstance(item, dict):
            return {key: self._redact_all(value, depth + 1) for key, value in item.items()}
        if isinstance(item, (tuple, set)):
            return tuple(self._redact_all(value, depth + 1) for value in item)
        if isinstance(item, list):
            return [self._redact_all(value, depth + 1) for value in item]
        return item

    def reset(self) -> None:
        with self._lock:
            self.patterns = set()
            self.replacer = None


_masker = SecretsMasker()


def mask_secret(secret: Any, name: str | None = None) -> None:
    """Airflow's ``mask_secret``: hide ``secret`` in every log from now on; with ``name``, only when the name is
    sensitive. Values shorter than the minimum length are not masked, as in Airflow."""
    if secret:
        _masker.add_mask(secret, name)


def redact(value: Any, name: str | None = None) -> Any:
    """Airflow's ``redact``: registered secrets replaced, and whole values under sensitive names hidden."""
    return _masker.redact(value, name)


def merge(new: Any, old: Any, name: str | None = None) -> Any:
    """Airflow's ``merge``: ``new`` as sent back by a client that read a redacted value, with every ``***``
    left under a sensitive name replaced by the ``old`` value (so a PATCH does not store the mask)."""
    if isinstance(new, str) and new == REPLACEMENT and name and should_hide_value_for_key(name):
        return old
    if isinstance(new, dict) and isinstance(old, dict):
        return {key: merge(value, old.get(key), key) if key in old else value for key, value in new.items()}
    return new


def redact_text(text: str) -> str:
    """``text`` with every registered secret (and its URL-encoded forms) replaced by ``***``."""
    return _masker.redact_text(text)


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where :func:`redact_text` would replace a secret in ``text``: ``(start, end)`` of each, in order (a log cut
    in two avoids cutting inside one, ``runtime.log_limit``)."""
    return _masker.secret_spans(text)


def should_hide_value_for_key(name: object) -> bool:
    return _masker.should_hide_value_for_key(name)


def reset_masker() -> None:
    """Forget every registered secret (tests)."""
    _masker.reset()
