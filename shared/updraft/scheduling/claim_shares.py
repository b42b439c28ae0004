"""A wide claim shared among scheduler invocations, so one run's tries start as fast as several schedulers claim.

One pass claims a run's ready tries one transaction of ``claims.BATCH`` after another, each after the last: a
1 -> 1,000 fan-out's end leaves one scheduler ~1,000 claims (2-3 s on AWS). Schedulers that meet on a run by
chance do not share that work: each reads and evaluates the whole run and they race for the same tries. So the
pass that finds a run with at least ``2 * SHARE_MIN`` ready tries cuts them into ``n`` shares (at most
``MAX_SHARES``, at least ``SHARE_MIN`` tries each) by a hash of each instance's key, asks ``n - 1`` scheduler
invocations (an asynchronous invoke of the scheduler function with ``Share`` in the run's event) to claim one
share each, and claims share 0 itself. A share's invocation reads the run, applies only what its evaluation
decides for its own instances, claims them and leaves every other instance alone; it never shares out again.

Only where the order of claims cannot matter: every ready try of the run fits the room its limits leave as the
pass evaluated them (the run's max_active_tasks, parallelism, each limit's size), so all of them start and none
waits behind another (a pool held by other DAGs meanwhile can still refuse some, as it refuses schedulers that
claim apart). An ask that fails is claimed by the asking pass; an invocation that fails leaves its share's
instances unwritten or scheduled, which the next tick evaluates and claims: nothing is lost, only delayed.
Each claim is the same transaction as any other (``claims``), so shares that overlap (an ask delivered twice, a
pass that shares a run again) cost lost races, never a double dispatch.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass

from updraft.model.records import TIKey
from updraft.scheduling.concurrent_writes import concurrently
from updraft.scheduling.decisions.changes import RunEvaluation
from updraft.store import keys

logger = logging.getLogger(__name__)

# The fewest tries a share claims: below, its invoke, its invocation's read and evaluation of the run (tens of
# milliseconds) cost about what claiming them in the asking pass does (~2.4 ms a try on AWS).
SHARE_MIN = 100
# The most shares a run is cut into: a 1,000-wide claim in shares of 125.
MAX_SHARES = 8


@dataclass(frozen=True)
class Share:
    """Share ``index`` of ``count`` of one run's ready tries: the instances whose key hashes to ``index``."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not (isinstance(self.index, int) and isinstance(self.count, int) and 0 <= self.index < self.count
                and 2 <= self.count <= MAX_SHARES):
            raise ValueError(f"a claim share is [index, count] with 0 <= index < count and 2 <= count <= "
                             f"{MAX_SHARES}; got [{self.index!r}, {self.count!r}]")

    def holds(self, key: TIKey) -> bool:
        return keys.shard(key.label, self.count) == self.index

    @property
    def asker(self) -> bool:
        """Share 0 is always the asking pass's: it applies the run's whole evaluation (the run's end, expansions,
        every stored instance's change); the other shares' invocations apply only their own instances'."""
        return self.index == 0

    def evaluation(self, evaluation: RunEvaluation) -> RunEvaluation:
        """What a share's invocation (not the asker's) applies of its evaluation of the run."""
        return RunEvaluation(changes=[c for c in evaluation.changes if self.holds(c.key)])

    def to_detail(self) -> list[int]:
        return [self.index, self.count]

    @classmethod
    def from_detail(cls, value: object) -> Share:
        """The share an event's ``detail.share`` names; ValueError saying what is wrong otherwise."""
        if not (isinstance(value, list) and len(value) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
            raise ValueError(f"a claim share is a list [index, count] of two integers; got {value!r}")
        return cls(value[0], value[1])


# Asks one scheduler invocation to claim a share of a run's ready tries (dag_id, run_id, share).
AskShare = Callable[[str, str, Share], None]


def share_count(ready: int) -> int:
    """How many shares ``ready`` tries of one run are cut into (1: the pass claims them all itself)."""
    return max(1, min(MAX_SHARES, ready // SHARE_MIN))


def ask_shares(ask: AskShare, dag_id: str, run_id: str, count: int) -> list[Share]:
    """Ask for shares 1 .. ``count - 1`` at once; return the shares the asking pass claims itself: share 0 and
    every share whose ask failed (logged)."""

    def asked(share: Share) -> bool:
        try:
            ask(dag_id, run_id, share)
        except Exception:
            logger.exception("a share of run %s/%s could not be asked for: this pass claims it", dag_id, run_id)
            return False
        return True

    others = [Share(index, count) for index in range(1, count)]
    sent = concurrently([functools.partial(asked, share) for share in others])
    return [Share(0, count), *(share for share, ok in zip(others, sent, strict=True) if not ok)]
