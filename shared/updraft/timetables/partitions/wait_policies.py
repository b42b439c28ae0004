"""When a rollup's downstream run may fire, given the upstream keys its window expects and those that arrived
(Airflow's ``airflow.partition_mappers.wait_policy``)."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PartitionSatisfaction:
    """Whether the arrived keys meet the policy, and whether they never can (``unreachable_reason`` says why)."""

    satisfied: bool
    unreachable: bool
    unreachable_reason: str | None


class WaitPolicy:
    """Base of the policies; the scheduler calls only :meth:`is_satisfied_by_keys`."""

    def is_satisfied(self, matched: int, expected: int) -> bool:
        raise NotImplementedError

    def is_unreachable(self, expected: int) -> bool:
        raise NotImplementedError

    def is_satisfied_by_keys(self, *, matched: Set[str], expected: Set[str]) -> PartitionSatisfaction:
        cardinality = len(expected)
        unreachable = self.is_unreachable(cardinality)
        return PartitionSatisfaction(
            satisfied=self.is_satisfied(matched=len(matched & expected), expected=cardinality),
            unreachable=unreachable,
            unreachable_reason=(f"wait policy {self!r} can never be satisfied given the window's cardinality "
                                f"{cardinality}" if unreachable else None),
        )

    def serialize(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True)
class WaitForAll(WaitPolicy):
    """Fire once every expected upstream key has arrived (an empty window is satisfied at once)."""

    def is_satisfied(self, matched: int, expected: int) -> bool:
        return matched == expected

    def is_unreachable(self, expected: int) -> bool:
        return False

    def is_satisfied_by_keys(self, *, matched: Set[str], expected: Set[str]) -> PartitionSatisfaction:
        return PartitionSatisfaction(satisfied=expected <= matched, unreachable=False, unreachable_reason=None)

    def serialize(self) -> dict[str, Any]:
        return {}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> WaitForAll:
        return cls()


@dataclass(frozen=True)
class MinimumCount(WaitPolicy):
    """``n > 0``: fire once ``n`` keys arrived; ``n < 0``: once at most ``-n`` are missing. ``n == 0`` is refused."""

    n: int

    def __post_init__(self) -> None:
        if self.n == 0:
            raise ValueError("MinimumCount(0) is degenerate: n=0 would always fire, even on empty windows. "
                             "Use WaitForAll() to require every key, or MinimumCount(n) with n != 0.")

    def is_satisfied(self, matched: int, expected: int) -> bool:
        if self.n > 0:
            return matched >= self.n
        return matched >= max(0, expected + self.n)

    def is_unreachable(self, expected: int) -> bool:
        return self.n > expected if self.n > 0 else False

    def serialize(self) -> dict[str, Any]:
        return {"n": self.n}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> MinimumCount:
        return cls(data["n"])
