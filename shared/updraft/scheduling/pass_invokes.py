"""A claim pass's dispatches sent while it goes on claiming, and all of them done before the pass returns.

Handing a claimed try to Lambda (or Fargate) is a network call (~15 ms for Lambda's async ``Invoke``), as long as
the claim's own writes: made one after another, it was the largest part of a pass. An executor whose ``dispatch``
waits on the network says so with ``dispatches_over_network = True``; its dispatches then go to a small bounded
pool of threads (one per scheduler), and the pass waits for all of them before it returns, so nothing outlives the
pass (a Lambda container may freeze after it) and failure semantics stay the executors': a refused invoke is
logged there and the try stays queued for the queued timeout. Any other executor (in-process threads, test
recorders) is called in claim order, as before: ``dags test`` relies on that order for priority.
"""

from __future__ import annotations

import concurrent.futures
import threading

from updraft.executors.base import Dispatch, Executor

# Invokes of one pass in flight at once. A claim transaction starts up to 25 tries, so its invokes (~15 ms each)
# are the pass's largest part unless many are in flight: 32 at ~15 ms is ~2,000 invokes/s per scheduler, within
# Lambda's Invoke request rate (10x the account's concurrency, 10,000/s by default). The executors' clients hold
# as many connections (``services``).
INVOKE_CONCURRENCY = 32


def dispatches_over_network(executor: Executor) -> bool:
    """Whether ``executor.dispatch`` waits on the network (and may be called from several threads at once)."""
    return bool(getattr(executor, "dispatches_over_network", False))


class InvokePool:
    """The bounded threads one claim pass object sends its network dispatches from (made on first use)."""

    def __init__(self, size: int = INVOKE_CONCURRENCY) -> None:
        self.size = size
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def submit(self, executor: Executor, item: Dispatch) -> concurrent.futures.Future[None]:
        with self._lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(self.size, thread_name_prefix="updraft-invokes")
            return self._pool.submit(executor.dispatch, [item])


class PassInvokes:
    """One pass's dispatches: ``send`` each as it is claimed, ``wait`` once at the end of the pass."""

    def __init__(self, executor: Executor, pool: InvokePool) -> None:
        self.executor = executor
        self.pool = pool if dispatches_over_network(executor) else None
        self._pending: list[concurrent.futures.Future[None]] = []

    def send(self, item: Dispatch) -> None:
        if self.pool is None:
            self.executor.dispatch([item])
        else:
            self._pending.append(self.pool.submit(self.executor, item))

    def wait(self) -> None:
        """Every sent dispatch finished; the first error (an executor bug: refusals are logged there) is raised
        after all of them finished, as ``concurrent_writes.concurrently`` does."""
        pending, self._pending = self._pending, []
        concurrent.futures.wait(pending)
        for future in pending:
            future.result()
