"""The executor interface the scheduler dispatches claimed task instances through."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from updraft.scheduling.records import TIKey


@dataclass(frozen=True)
class Dispatch:
    """Everything a worker needs to find and fence one try: identity, try number and token, placement."""

    key: TIKey
    try_number: int
    try_id: str
    executor: str = "lambda"
    compute: dict[str, Any] = field(default_factory=dict)

    def to_payload(self) -> dict[str, Any]:
        """The JSON a worker invocation carries (no code, no XCom values)."""
        return {"dag_id": self.key.dag_id, "run_id": self.key.run_id, "task_id": self.key.task_id,
                "map_index": self.key.map_index, "try_number": self.try_number, "try_id": self.try_id,
                "executor": self.executor, "compute": dict(self.compute)}


class Executor(Protocol):
    def dispatch(self, items: list[Dispatch]) -> None:
        """Start the given tries. Delivery may duplicate a dispatch: workers are fenced by ``try_id``."""
