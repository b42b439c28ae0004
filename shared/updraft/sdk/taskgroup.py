"""TaskGroup: a named group of tasks whose id prefixes its tasks' ids and that can be wired as one node."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from updraft.model.identifiers import validate_group_key
from updraft.sdk._internal.contexts import DagContext, TaskGroupContext
from updraft.sdk.exceptions import (
    AirflowException,
    DuplicateTaskIdFound,
    TaskAlreadyInTaskGroup,
    UnsupportedFeatureError,
)
from updraft.sdk.mixins import DependencyMixin
from updraft.sdk.trigger_rule import TriggerRule

if TYPE_CHECKING:
    from updraft.sdk.dag import DAG
    from updraft.sdk.edges import EdgeModifier
    from updraft.sdk.node import TaskNode


class TaskGroup(DependencyMixin):
    """``group >> task`` wires the group's leaves; ``task >> group`` wires its roots (as in Airflow)."""

    def __init__(
        self,
        group_id: str | None,
        prefix_group_id: bool = True,
        parent_group: TaskGroup | None = None,
        dag: DAG | None = None,
        default_args: dict | None = None,
        tooltip: str = "",
        ui_color: str = "CornflowerBlue",
        ui_fgcolor: str = "#000",
        add_suffix_on_collision: bool = False,
        group_display_name: str | None = None,
        doc_md: str | None = None,
    ) -> None:
        self.prefix_group_id = prefix_group_id
        self.doc_md = doc_md
        self.default_args = dict(default_args or {})
        self.tooltip = tooltip
        self.ui_color = ui_color
        self.ui_fgcolor = ui_fgcolor
        # Keyed and named by group_id, which is None for a DAG's root group.
        self.children: dict[str | None, TaskNode | TaskGroup] = {}
        self.upstream_group_ids: set[str | None] = set()
        self.downstream_group_ids: set[str | None] = set()
        self.upstream_task_ids: set[str] = set()
        self.downstream_task_ids: set[str] = set()

        if group_id is None:  # the root group of a DAG
            if parent_group is not None:
                raise AirflowException("Root TaskGroup cannot have parent_group")
            self._group_id = None
            self.parent_group = None
            self.dag = dag
            self.used_group_ids: set[str | None] = {None}
            self.group_display_name = ""
            return

        validate_group_key(group_id)
        dag = dag or DagContext.current()
        parent_group = parent_group or TaskGroupContext.current(dag)
        if parent_group is None:
            raise RuntimeError("TaskGroup can only be used inside a dag (pass dag= or use it in a "
                               "`with DAG(...)` block)")
        if parent_group.default_args:
            # A nested group inherits its parent's defaults; its own win (Airflow merges at construction).
            self.default_args = {**parent_group.default_args, **self.default_args}
        self.parent_group = parent_group
        self.dag = parent_group.dag
        self.used_group_ids = parent_group.used_group_ids
        self._group_id = group_id
        if self.group_id in self.used_group_ids:
            if not add_suffix_on_collision:
                raise DuplicateTaskIdFound(f"group_id '{self.group_id}' has already been added to the DAG")
            # "g" and "g__1" both continue the "g__N" series, as in Airflow.
            base = re.split(r"__\d+$", group_id)[0]
            suffixes = [int(m.group(1)) for g in self.used_group_ids if g
                        for m in [re.fullmatch(re.escape(parent_group.child_id(base)) + r"__(\d+)", g)] if m]
            self._group_id = f"{base}__{max(suffixes, default=0) + 1}"
        self.used_group_ids.add(self.group_id)
        if self.dag is not None and self.group_id in self.dag.task_dict:
            raise DuplicateTaskIdFound(f"group_id '{self.group_id}' has already been added to the DAG as a task")
        self.group_display_name = group_display_name or ""
        parent_group.add(self)

    @classmethod
    def create_root(cls, dag: DAG) -> TaskGroup:
        return cls(group_id=None, dag=dag)

    @property
    def group_id(self) -> str | None:
        """The full id: prefixed by the parent's id when the parent prefixes its children."""
        if self._group_id and self.parent_group is not None and self.parent_group.prefix_group_id \
                and self.parent_group._group_id:
            return self.parent_group.child_id(self._group_id)
        return self._group_id

    @property
    def node_id(self) -> str | None:
        return self.group_id

    @property
    def is_root(self) -> bool:
        return self._group_id is None

    @property
    def label(self) -> str | None:
        return self.group_display_name or self._group_id

    def child_id(self, label: str) -> str:
        if self.prefix_group_id and self.group_id:
            return f"{self.group_id}.{label}"
        return label

    def add(self, node: TaskNode | TaskGroup) -> None:
        # lazy: cold start (the worker imports taskgroup for mapped groups, not the task-node layer)
        from updraft.sdk.node import TaskNode

        key = node.node_id
        if isinstance(node, TaskNode):
            if node.task_group is not None and node.task_group is not self:
                raise TaskAlreadyInTaskGroup(f"cannot add '{key}' to '{self.group_id}' (already in "
                                             f"'{node.task_group.group_id}')")
            node.task_group = self
        if key in self.children and self.children[key] is not node:
            kind = "Task" if isinstance(node, TaskNode) else "Task Group"
            raise DuplicateTaskIdFound(f"{kind} id '{key}' has already been added to the DAG")
        self.children[key] = node

    # -- lookups Airflow offers DAG files ----------------------------------------------------------------------
    def get_child_by_label(self, label: str) -> TaskNode | TaskGroup:
        return self.children[self.child_id(label)]

    def __getitem__(self, label: str) -> TaskNode | TaskGroup:
        try:
            return self.get_child_by_label(label)
        except KeyError:
            raise KeyError(f"Task {label!r} not found") from None

    def __iter__(self):
        return self.iter_tasks()

    def has_task(self, task: TaskNode) -> bool:
        return any(t is task for t in self.iter_tasks())

    def get_task_group_dict(self) -> dict[str | None, TaskGroup]:
        groups: dict[str | None, TaskGroup] = {self.group_id: self}
        for child in self.children.values():
            if isinstance(child, TaskGroup):
                groups.update(child.get_task_group_dict())
        return groups

    # -- graph helpers ----------------------------------------------------------------------------------------
    def iter_tasks(self):
        for child in self.children.values():
            if isinstance(child, TaskGroup):
                yield from child.iter_tasks()
            else:
                yield child

    def _task_ids(self) -> set[str]:
        return {t.task_id for t in self.iter_tasks()}

    @property
    def roots(self) -> list[TaskNode]:
        ids = self._task_ids()
        return [t for t in self.iter_tasks() if not (t.upstream_task_ids & ids)]

    @property
    def leaves(self) -> list[TaskNode]:
        """Tasks with no downstream in the group; a teardown there stands aside for the work task it follows,
        so ``group >> next`` waits for the work, not for the clean-up (Airflow's ``get_leaves``)."""
        tasks = list(self.iter_tasks())
        ids = {t.task_id for t in tasks}

        def has_non_teardown_downstream(task: TaskNode, exclude: str) -> bool:
            return any(d.task_id != exclude and d.task_id in ids and not d.is_teardown
                       for d in task.downstream_list)

        def first_non_teardowns(task: TaskNode) -> Iterator[TaskNode]:
            for upstream in task.upstream_list:
                if upstream.task_id not in ids:
                    continue
                if upstream.is_teardown:
                    yield from first_non_teardowns(upstream)
                elif task.is_teardown and upstream.is_setup:
                    continue  # never through the teardown-to-setup edge
                elif not has_non_teardown_downstream(upstream, exclude=task.task_id):
                    yield upstream

        leaves: list[TaskNode] = []
        for task in tasks:
            if task.downstream_task_ids.isdisjoint(ids):
                leaves.extend(first_non_teardowns(task) if task.is_teardown else [task])
        return leaves

    def update_relative(self, other: DependencyMixin, upstream: bool = True,
                        edge_modifier: EdgeModifier | None = None) -> None:
        """Remember the group-level edge (for the UI's collapsed group view); task edges are set separately."""
        if isinstance(other, TaskGroup):
            (self.upstream_group_ids if upstream else self.downstream_group_ids).add(other.group_id)
        else:
            ids = {t.task_id for t in (other.leaves if upstream else other.roots)}  # type: ignore[attr-defined]
            (self.upstream_task_ids if upstream else self.downstream_task_ids).update(ids)

    def _leaves_for_downstream(self) -> list[TaskNode]:
        """What ``group >> x`` wires: the leaves, or for an empty group whatever was wired into it (Airflow).

        So ``a >> empty_group >> b`` still gives ``a >> b``, and an empty group wired on one side only is a
        no-op rather than an error, as Airflow parses it. Airflow's walk continues into the DAG's root group,
        wiring every leaf of the DAG (often the downstream task itself, a self-loop); ours stops below it.
        """
        group: TaskGroup | None = self
        while group is not None and not group.is_root:
            leaves = group.leaves
            if leaves:
                return leaves
            if group.upstream_task_ids and group.dag is not None:
                return [group.dag.get_task(tid) for tid in sorted(group.upstream_task_ids)]
            group = group.parent_group
        return []

    def set_upstream(self, other: Any, edge_modifier: EdgeModifier | None = None) -> None:
        for obj in self.flatten(other):
            if isinstance(obj, TaskGroup):
                self.upstream_group_ids.add(obj.group_id)
                obj.downstream_group_ids.add(self.group_id)
            else:
                self.upstream_task_ids.update(getattr(t, "task_id", "") for t in obj.leaves)
        for root in self.roots:
            root.set_upstream(other, edge_modifier)

    def set_downstream(self, other: Any, edge_modifier: EdgeModifier | None = None) -> None:
        leaves = self._leaves_for_downstream()
        for obj in self.flatten(other):
            if isinstance(obj, TaskGroup):
                self.downstream_group_ids.add(obj.group_id)
                obj.upstream_group_ids.add(self.group_id)
            else:
                self.downstream_task_ids.update(getattr(t, "task_id", "") for t in obj.roots)
        for leaf in leaves:
            leaf.set_downstream(other, edge_modifier)

    def __enter__(self) -> TaskGroup:
        TaskGroupContext.push(self)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        TaskGroupContext.pop()

    def __repr__(self) -> str:
        return f"<TaskGroup: {self.group_id}>"


class MappedTaskGroup(TaskGroup):
    """A group whose tasks all run once per map index of ``expand_input`` (``@task_group(...).expand(...)``).

    Every task inside has the group's map indexes; inside the group, instance ``i`` of a task follows instance ``i``
    of its upstream tasks in the group, and a task downstream of the group waits for every instance. Refused as
    Airflow refuses (a mapped task inside, ``MappedTaskInMappedGroupError``, as Airflow 3.3's NotImplementedError;
    a group expanded over an enclosing group's argument, ``MappedArgument``'s ValueError), each a clear error
    when the DAG is parsed. A mapped group inside a mapped group is Airflow's: see ``validate_nested_mapped_groups``.
    """

    def __init__(self, group_id: str | None, *, expand_input: Any, **kwargs: Any) -> None:
        super().__init__(group_id, **kwargs)
        self.expand_input = expand_input

    def _enclosing_groups(self) -> Iterator[TaskGroup]:
        group = self.parent_group
        while group is not None:
            yield group
            group = group.parent_group

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self._check_children()
                # lazy: import cost (`DAG` alone stays without XComArg)
                from updraft.sdk.xcom_arg import XComArg

                for op, _ in XComArg.iter_xcom_references(self.expand_input.value):
                    self.set_upstream(op)
        finally:
            super().__exit__(exc_type, exc, tb)

    def _check_children(self) -> None:
        for task in self.iter_tasks():  # a mapped task inside was refused when it was made (MappedOperator)
            if task.trigger_rule == TriggerRule.ALWAYS:
                raise ValueError("Task-generated mapping within a mapped task group is not allowed with trigger "
                                 "rule 'always'")


def mapped_groups_of(node: Any) -> list[MappedTaskGroup]:
    """Every mapped task group a task is in, outermost first."""
    groups: list[MappedTaskGroup] = []
    group = mapped_group_enclosing(getattr(node, "task_group", None))
    while group is not None:
        groups.insert(0, group)
        group = mapped_group_enclosing(group.parent_group)
    return groups


def validate_nested_mapped_groups(tasks: Iterable[Any]) -> None:
    """Nested mapped task groups, as Airflow 3.3 runs them, or an import error where Updraft would differ.

    A task inside mapped groups inside mapped groups has one instance per map index of the product of the groups'
    lengths, and each group's argument is resolved at that map index modulo the group's own length (Airflow's
    ``_expand_mapped_field``: so groups of equal length repeat combinations). Refused: a dependency between such a
    task and a task of an enclosing mapped group outside its own innermost group (or of another group nested in
    it), for which Airflow picks upstream instances by a third rule (``map_index * ancestor_count // count``) that
    Updraft's scheduler does not follow; dependencies within the innermost group, and with tasks outside every
    mapped group, are Airflow's.
    """
    tasks = list(tasks)
    by_id = {t.task_id: t for t in tasks}
    for task in tasks:
        groups = mapped_groups_of(task)
        if len(groups) < 2:
            continue
        for other_id in sorted(set(task.upstream_task_ids) | set(task.downstream_task_ids)):
            other = by_id.get(other_id)
            other_groups = mapped_groups_of(other) if other is not None else []
            if (other_groups and other_groups[-1] is groups[-1]) or not set(other_groups) & set(groups):
                continue
            raise UnsupportedFeatureError(
                f"a dependency between {task.task_id!r} (in nested mapped task group {groups[-1].group_id!r}) and "
                f"{other_id!r} (in its enclosing mapped group {other_groups[0].group_id!r} but not in "
                f"{groups[-1].group_id!r})",
                "Airflow matches their map indexes by map_index * outer_count // inner_count while resolving the "
                "groups' arguments by map_index modulo each group's length; Updraft runs nested mapped groups only "
                "where these agree: keep the dependencies of the inner group's tasks inside that group, or on "
                "tasks outside every mapped group")


def closest_mapped_group(node: Any) -> MappedTaskGroup | None:
    """The innermost mapped task group a task is in, or None."""
    return mapped_group_enclosing(getattr(node, "task_group", None))


def mapped_group_enclosing(group: TaskGroup | None) -> MappedTaskGroup | None:
    """``group`` itself when it is mapped, else the innermost mapped group around it, or None."""
    while group is not None:
        if isinstance(group, MappedTaskGroup):
            return group
        group = group.parent_group
    return None
