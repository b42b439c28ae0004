"""What a branch or a short-circuit result implies for the tasks after it.

Both skip only what Airflow skips directly; the trigger rules then decide the rest (``evaluate_run`` propagates
the skips through the graph in one pass):

- ``branch_skips``: Airflow's ``BranchMixIn.do_branch`` + ``SkipMixin.skip_all_except``. Followed ids may be task
  ids or task-group ids (a group stands for its root tasks), also relative to the branching task's own group.
  Every direct downstream task is skipped unless it is followed or downstream of a followed task (so a join
  right after the branch still runs when one branch is empty). ``None`` or an empty list skips them all.
- ``short_circuit_skips``: a falsy ``ShortCircuitOperator`` result. With ``ignore_downstream_trigger_rules=True``
  (the default) every task downstream of it, transitively, is skipped outright; with False only the direct
  downstream tasks are, and the others follow their trigger rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from updraft.serialization.model import SerializedDAG, SerializedTask


class InvalidBranchError(ValueError):
    """A branch callable returned something that is not a task or task-group id of the DAG."""


def branch_skips(dag: SerializedDAG, task_id: str, followed_task_ids: str | Iterable[str] | None) -> set[str]:
    task = dag.task_dict[task_id]
    followed = set(_expand_groups(dag, task, followed_task_ids))
    invalid = followed - set(dag.task_dict)
    if invalid:
        raise InvalidBranchError(f"'branch_task_ids' must contain only valid task_ids. Invalid tasks found: "
                                 f"{sorted(invalid)}.")
    for branch_id in list(followed):
        followed |= flat_downstream(dag, branch_id)
    return {d for d in task.downstream_task_ids if d not in followed}


def short_circuit_skips(dag: SerializedDAG, task_id: str, *,
                        ignore_downstream_trigger_rules: bool | None = None) -> set[str]:
    task = dag.task_dict[task_id]
    if ignore_downstream_trigger_rules is None:
        ignore_downstream_trigger_rules = (task.extra or {}).get("ignore_downstream_trigger_rules", True)
    if ignore_downstream_trigger_rules:
        return flat_downstream(dag, task_id)
    return set(task.downstream_task_ids)


def deepest_first(dag: SerializedDAG, task_ids: Iterable[str]) -> list[str]:
    """``task_ids`` in the order their skips are written: each after every one of them downstream of it.

    Airflow skips a decision's tasks in one database transaction; here each is its own conditional write. Written
    deepest first, an evaluation that reads one of them skipped reads every one of them below it skipped too, so
    it never runs a task the decision skips because its upstream already shows skipped (an ``all_done`` task after
    a short-circuit's chain). Ids the DAG does not have come last."""
    position = {task_id: index for index, task_id in enumerate(dag.topological_order)}
    return sorted(task_ids, key=lambda task_id: (-position.get(task_id, -1), task_id))


def flat_downstream(dag: SerializedDAG, task_id: str) -> set[str]:
    """Every task downstream of ``task_id``, transitively (Airflow's ``get_flat_relative_ids(upstream=False)``)."""
    seen: set[str] = set()
    stack = list(dag.task_dict[task_id].downstream_task_ids)
    while stack:
        current = stack.pop()
        if current not in seen and current in dag.task_dict:
            seen.add(current)
            stack.extend(dag.task_dict[current].downstream_task_ids)
    return seen


def _expand_groups(dag: SerializedDAG, task: SerializedTask, followed: str | Iterable[str] | None) -> Iterator[str]:
    if followed is None:
        return
    if isinstance(followed, str):
        followed = [followed]
    groups = task_groups(dag)
    for branch in followed:
        if not isinstance(branch, str):
            raise InvalidBranchError(f"Unable to branch to the specified tasks. The branching function returned "
                                     f"invalid 'branch_task_ids': {branch!r}")
        resolved = _resolve_relative(dag, task, branch, groups)
        if resolved in groups:
            yield from group_roots(dag, resolved, groups)
        else:
            yield resolved


def _resolve_relative(dag: SerializedDAG, task: SerializedTask, branch: str, groups: dict[str, dict[str, Any]]) -> str:
    """A branch inside group ``g`` may return ``"path_a"`` for ``"g.path_a"`` (Airflow's ``_resolve_branch_id``)."""
    if branch in groups or branch in dag.task_dict:
        return branch
    group = groups.get(task.task_group_id or "")
    if group is not None and group.get("prefix_group_id", True):
        candidate = f"{group['group_id']}.{branch}"
        if candidate in groups or candidate in dag.task_dict:
            return candidate
    return branch


def task_groups(dag: SerializedDAG) -> dict[str, dict[str, Any]]:
    """Group id -> the serialized group (the root group, whose id is None, is left out)."""
    found: dict[str, dict[str, Any]] = {}
    stack = [dag.task_group] if dag.task_group else []
    while stack:
        group = stack.pop()
        if group.get("group_id"):
            found[group["group_id"]] = group
        stack.extend(child for child in group.get("children", ()) if "children" in child)
    return found


def group_roots(dag: SerializedDAG, group_id: str, groups: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """The group's tasks (nested groups included) with no upstream task inside the group (``TaskGroup.roots``)."""
    group = (groups or task_groups(dag))[group_id]
    members = sorted(_group_task_ids(group))
    inside = set(members)
    return [t for t in members if t in dag.task_dict and inside.isdisjoint(dag.task_dict[t].upstream_task_ids)]


def group_task_ids(dag: SerializedDAG, group_id: str) -> set[str] | None:
    """Every task of the group, nested groups included (iterating a ``TaskGroup``); None: no such group."""
    group = task_groups(dag).get(group_id)
    return None if group is None else _group_task_ids(group)


def _group_task_ids(group: dict[str, Any]) -> set[str]:
    ids: set[str] = set()
    for child in group.get("children", ()):
        if "children" in child:
            ids |= _group_task_ids(child)
        elif "task_id" in child:
            ids.add(child["task_id"])
    return ids
