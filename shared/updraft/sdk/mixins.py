"""``>>`` and ``<<`` for everything that can be wired: tasks, lists of tasks, XComArgs, TaskGroups and Labels.

Every dependency-capable object exposes ``roots`` (what an upstream connects to) and ``leaves`` (what connects to
a downstream), so ``group >> task`` and ``task >> xcom_arg`` reduce to task-to-task edges in one place.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from updraft.sdk.edges import EdgeModifier


class DependencyMixin:
    @property
    @abstractmethod
    def roots(self) -> Sequence[DependencyMixin]:
        """The tasks that become downstream of whatever is set upstream of this object."""

    @property
    @abstractmethod
    def leaves(self) -> Sequence[DependencyMixin]:
        """The tasks that become upstream of whatever is set downstream of this object."""

    @abstractmethod
    def set_upstream(self, other: Any, edge_modifier: EdgeModifier | None = None) -> None: ...

    @abstractmethod
    def set_downstream(self, other: Any, edge_modifier: EdgeModifier | None = None) -> None: ...

    def update_relative(self, other: DependencyMixin, upstream: bool = True,
                        edge_modifier: EdgeModifier | None = None) -> None:
        """Hook for objects (Labels) that must learn about the other side of an edge; tasks need nothing."""

    def __rshift__(self, other: Any) -> Any:
        self.set_downstream(other)
        return other

    def __lshift__(self, other: Any) -> Any:
        self.set_upstream(other)
        return other

    def __rrshift__(self, other: Any) -> DependencyMixin:
        """``[a, b] >> self``: lists have no ``>>`` so Python asks the right-hand side."""
        self.__lshift__(other)
        return self

    def __rlshift__(self, other: Any) -> DependencyMixin:
        self.__rshift__(other)
        return self

    @staticmethod
    def flatten(obj: Any) -> list[DependencyMixin]:
        """Accept one object or any (nested) iterable of them, as Airflow does; reject anything else clearly."""
        if isinstance(obj, DependencyMixin):
            return [obj]
        if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes, dict)):
            out: list[DependencyMixin] = []
            for item in obj:
                out.extend(DependencyMixin.flatten(item))
            return out
        raise TypeError(f"Relationships can only be set between operators, task groups, XComArgs and labels; "
                        f"got {type(obj).__name__}: {obj!r}")
