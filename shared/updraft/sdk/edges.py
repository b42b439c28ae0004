"""Edge labels: ``a >> Label("on error") >> b`` records a label on the a->b edge for the UI."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from updraft.sdk.mixins import DependencyMixin

if TYPE_CHECKING:
    from updraft.sdk.dag import DAG


class EdgeModifier(DependencyMixin):
    """Sits between two sides of ``>>`` and remembers its upstream until it meets its downstream."""

    def __init__(self, label: str | None = None) -> None:
        self.label = label
        self._upstream: list[DependencyMixin] = []
        self._downstream: list[DependencyMixin] = []

    @property
    def roots(self) -> list[DependencyMixin]:
        return self._downstream

    @property
    def leaves(self) -> list[DependencyMixin]:
        return self._upstream

    def update_relative(self, other: DependencyMixin, upstream: bool = True,
                        edge_modifier: EdgeModifier | None = None) -> None:
        """``a >> label`` after ``label >> b``: the label already knows ``b``, so ``a >> b`` gets the label now."""
        if upstream:
            self.set_upstream(other)
        else:
            self.set_downstream(other)

    def set_upstream(self, other: Any, edge_modifier: EdgeModifier | None = None) -> None:
        for obj in self.flatten(other):
            self._upstream.append(obj)
            for down in self._downstream:
                down.set_upstream(obj, edge_modifier=self)

    def set_downstream(self, other: Any, edge_modifier: EdgeModifier | None = None) -> None:
        for obj in self.flatten(other):
            self._downstream.append(obj)
            for up in self._upstream:
                up.set_downstream(obj, edge_modifier=self)

    def add_edge_info(self, dag: DAG, upstream_id: str, downstream_id: str) -> None:
        dag.set_edge_info(upstream_id, downstream_id, {"label": self.label} if self.label else {})


def Label(label: str) -> EdgeModifier:
    """An edge label, shown on the edge in the graph view."""
    return EdgeModifier(label)
