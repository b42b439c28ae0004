"""An embedded AWS for local runs: moto in-process, one request at a time.

moto's single-item check-then-write is not atomic across threads (the GIL can switch between them), so without
serializing requests, concurrent schedulers and workers would see races real DynamoDB does not have
(../shared/notes/aws-offline.md, 2a). Serializing costs nothing here: moto gains no parallelism on 2 cores.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

from updraft.local import moto_speedups
from updraft.local.moto_server import EmbeddedAwsServer
from updraft.resources import LOCAL_CREDENTIALS

_lock = threading.RLock()
_depth = 0
_unpatched_call: Callable[..., Any] | None = None  # moto's own BotocoreStubber.__call__ while patched


@contextlib.contextmanager
def serialized_moto() -> Iterator[None]:
    """Let one request into in-process moto at a time (re-entrant; nested uses share one patch)."""
    global _depth, _unpatched_call
    from moto.core import botocore_stubber

    # moto offers no hook around a request, so its stubber's __call__ is swapped on the class (the assignments
    # mypy refuses as method-assign) and restored when the outermost use ends.
    with _lock:
        if _depth == 0:
            original = _unpatched_call = botocore_stubber.BotocoreStubber.__call__

            def locked(self: Any, *args: Any, **kwargs: Any) -> Any:
                with _lock:
                    return original(self, *args, **kwargs)

            botocore_stubber.BotocoreStubber.__call__ = locked  # type: ignore[method-assign]
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _unpatched_call is not None:
                botocore_stubber.BotocoreStubber.__call__ = _unpatched_call  # type: ignore[method-assign]
                _unpatched_call = None


@contextlib.contextmanager
def served_over_http() -> Iterator[str]:
    """The in-process moto (inside ``embedded_aws``) served over HTTP too, for other processes (DAG code's
    children): moto keeps its state in module globals, so both see the same AWS; requests over HTTP take the lock
    in-process ones take, so they stay one at a time. Yields the server's URL."""
    with EmbeddedAwsServer(lock=_lock) as server:
        yield server.url


@contextlib.contextmanager
def embedded_aws(region: str = "us-east-1") -> Iterator[None]:
    """Fake credentials, moto's in-process AWS and serialized requests, for the duration of the block."""
    from moto import mock_aws

    moto_speedups.apply()

    for name, value in {**LOCAL_CREDENTIALS, "AWS_DEFAULT_REGION": region}.items():
        os.environ.setdefault(name, value)
    with mock_aws(), serialized_moto():
        yield
