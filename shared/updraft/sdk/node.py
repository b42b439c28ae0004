"""A task in the graph: what BaseOperator and MappedOperator share (ids, DAG membership, edges)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from updraft.sdk.mixins import DependencyMixin
from updraft.sdk.setup_teardown import SetupTeardownFlags

if TYPE_CHECKING:
    from collections.abc import Collection
    from datetime import datetime

    from updraft.sdk.compute import Compute
    from updraft.sdk.dag import DAG
    from updraft.sdk.edges import EdgeModifier
    from updraft.sdk.param import ParamsDict
    from updraft.sdk.priority_strategy import PriorityWeightStrategy
    from updraft.sdk.taskgroup import TaskGroup
    from updraft.sdk.trigger_rule import TriggerRule, WeightRule


class TaskNode(SetupTeardownFlags, DependencyMixin):
    """Edges are kept as task_id sets on both ends, like Airflow, so a DAG is plain data once built."""

    task_id: str
    _dag: DAG | None
    task_group: TaskGroup | None
    upstream_task_ids: set[str]
    downstream_task_ids: set[str]

    # The operator surface every task has, so the DAG and the serializer can read any task: BaseOperator sets
    # these per class or per instance; MappedOperator copies its prototype's instance attributes and answers
    # the class-level ones from its operator class. Declared only, so a missing one is still an AttributeError.
    is_mapped: ClassVar[bool]
    template_fields: ClassVar[tuple[str, ...]]
    # Per class, but PythonOperator(templates_exts=...) overrides it on the instance, as in Airflow.
    template_ext: tuple[str, ...]
    template_fields_renderers: ClassVar[dict[str, str]]
    extra_serialized_fields: ClassVar[tuple[str, ...]]
    inherits_from_empty_operator: ClassVar[bool]
    _can_skip_downstream: ClassVar[bool]
    _is_sensor: ClassVar[bool]
    operator_extra_links: Collection[Any]
    start_date: datetime | None
    end_date: datetime | None
    trigger_rule: TriggerRule
    weight_rule: WeightRule | PriorityWeightStrategy
    priority_weight: int
    params: ParamsDict
    compute: Compute
    _task_display_name: str | None

    @staticmethod
    def _new_relatives() -> dict[str, set[str]]:
        """A new node's relatives, none yet, by attribute (its constructor sets them)."""
        return {"upstream_task_ids": set(), "downstream_task_ids": set()}

    def _init_node(self) -> None:
        for name, relatives in self._new_relatives().items():
            setattr(self, name, relatives)

    @property
    def node_id(self) -> str:
        return self.task_id

    @property
    def label(self) -> str:
        """What the graph shows: the display name if one was given, else the id without its group prefix."""
        if self._task_display_name and self._task_display_name != self.task_id:
            return self._task_display_name
        group = self.task_group
        if group is not None and group.group_id and group.prefix_group_id:
            return self.task_id[len(group.group_id) + 1:]
        return self.task_id

    @property
    def task_type(self) -> str:
        """The operator's class name (a mapped task answers with the class it maps)."""
        return type(self).__name__

    @property
    def dag(self) -> DAG:
        if self._dag is None:
            raise RuntimeError(f"Operator {self} has not been assigned to a DAG yet")
        return self._dag

    @dag.setter
    def dag(self, dag: DAG | None) -> None:
        if dag is None or dag is self._dag:
            return
        if self._dag is not None:
            raise ValueError(f"The DAG assigned to {self} can not be changed.")
        self._dag = dag
        dag.add_task(self)

    def has_dag(self) -> bool:
        return self._dag is not None

    @property
    def dag_id(self) -> str:
        return self._dag.dag_id if self._dag is not None else f"adhoc_{getattr(self, 'owner', 'airflow')}"

    @property
    def roots(self) -> list[TaskNode]:
        return [self]

    @property
    def leaves(self) -> list[TaskNode]:
        return [self]

    @property
    def upstream_list(self) -> list[TaskNode]:
        return [self.dag.get_task(t) for t in sorted(self.upstream_task_ids)]

    @property
    def downstream_list(self) -> list[TaskNode]:
        return [self.dag.get_task(t) for t in sorted(self.downstream_task_ids)]

    def get_direct_relative_ids(self, upstream: bool = False) -> set[str]:
        return self.upstream_task_ids if upstream else self.downstream_task_ids

    def get_direct_relatives(self, upstream: bool = False) -> list[TaskNode]:
        return self.upstream_list if upstream else self.downstream_list

    def get_flat_relative_ids(self, *, upstream: bool = False) -> set[str]:
        """Every task reachable upstream or downstream; a loop, not recursion, so long chains are fine."""
        if self._dag is None:
            return set()
        seen: set[str] = set()
        frontier = set(self.get_direct_relative_ids(upstream))
        while frontier:
            seen |= frontier
            frontier = {r for tid in frontier
                        for r in self._dag.task_dict[tid].get_direct_relative_ids(upstream)} - seen
        return seen

    def get_flat_relatives(self, upstream: bool = False) -> list[TaskNode]:
        if self._dag is None:
            return []
        return [self._dag.task_dict[tid] for tid in sorted(self.get_flat_relative_ids(upstream=upstream))]

    def set_upstream(self, other: Any, edge_modifier: EdgeModifier | None = None) -> None:
        self._set_relatives(other, upstream=True, edge_modifier=edge_modifier)

    def set_downstream(self, other: Any, edge_modifier: EdgeModifier | None = None) -> None:
        self._set_relatives(other, upstream=False, edge_modifier=edge_modifier)

    def _set_relatives(self, other: Any, *, upstream: bool, edge_modifier: EdgeModifier | None) -> None:
        tasks: list[TaskNode] = []
        for obj in self.flatten(other):
            obj.update_relative(self, not upstream, edge_modifier=edge_modifier)
            tasks.extend(obj.leaves if upstream else obj.roots)  # type: ignore[arg-type]

        dags = {id(t._dag): t._dag for t in [self, *tasks] if t._dag is not None}
        if len(dags) > 1:
            names = sorted(d.dag_id for d in dags.values())
            raise RuntimeError(f"Tried to set relationships between tasks in more than one Dag: {names}")
        if not dags:
            # Airflow refuses too: an edge between two DAG-less tasks would silently vanish from every DAG.
            raise ValueError("Tried to create relationships between tasks that don't have Dags yet. "
                             f"Set the Dag for at least one task and try again: {[self, *tasks]}")
        (dag,) = dags.values()
        for task in [self, *tasks]:
            if task._dag is None:
                task.dag = dag

        for task in tasks:
            if upstream:
                up, down = task, self
            else:
                up, down = self, task
            up.downstream_task_ids.add(down.task_id)
            down.upstream_task_ids.add(up.task_id)
            if edge_modifier is not None and self._dag is not None:
                edge_modifier.add_edge_info(self._dag, up.task_id, down.task_id)

    def __repr__(self) -> str:
        return f"<Task({type(self).__name__}): {self.task_id}>"
