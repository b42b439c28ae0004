"""What one scheduling pass did: the runs it created, started and finished, the tries it dispatched, and why
each scheduled instance it looked at was not claimed."""

from __future__ import annotations

from dataclasses import dataclass, field

from updraft.executors.base import Dispatch
from updraft.scheduling.claim_shares import Share
from updraft.scheduling.decisions.blocked import BlockedReason


@dataclass
class PassReport:
    runs_created: list[str] = field(default_factory=list)
    runs_started: list[str] = field(default_factory=list)
    runs_finished: dict[str, str] = field(default_factory=dict)
    dispatched: list[Dispatch] = field(default_factory=list)
    not_claimed: dict[str, BlockedReason] = field(default_factory=dict)  # ti label -> why
    full_limits: set[str] = field(default_factory=set)  # limits that had no room for a scheduled try
    coalesced: bool = False  # another call in this process was scheduling the run and will look again
    stale_runs: set[tuple[str, str]] = field(default_factory=set)  # changed by someone else mid-pass
    poisoned: dict[str, str] = field(default_factory=dict)  # "dag_id/run_id" (or dag_id) set aside -> the error
    runs_running: int | None = None  # the tick's: runs running after it (None: not a tick's pass)
    # Runs whose ready tries this pass cut into shares (``claim_shares``): the shares it claims itself.
    shared_out: dict[tuple[str, str], list[Share]] = field(default_factory=dict)

    def merge(self, then: PassReport) -> None:
        """Add what a later pass over some of the same runs did (``then``): its runs, tries and refusals."""
        self.runs_started.extend(then.runs_started)
        self.runs_finished.update(then.runs_finished)
        self.dispatched.extend(then.dispatched)
        self.not_claimed.update(then.not_claimed)
        self.full_limits |= then.full_limits
        self.poisoned.update(then.poisoned)
        self.shared_out.update(then.shared_out)
