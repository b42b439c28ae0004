"""Walks over a serialized DAG's task graph: transitive relatives, and which setups and teardowns belong to a task.

The setup/teardown queries are Airflow's ``DAGNode.get_upstreams_only_setups_and_teardowns`` /
``get_upstreams_follow_setups`` / ``get_upstreams_only_setups`` and ``partial_subset``'s choice of tasks, on
task ids, so the scheduler (a work task waits for its setups) and a clear (clearing a work task clears its setups
and teardowns) read one definition.
"""

from __future__ import annotations

from collections.abc import Iterable

from updraft.serialization.model import SerializedDAG


def relatives(dag: SerializedDAG, task_ids: Iterable[str], *, upstream: bool) -> set[str]:
    """Every task upstream (or downstream) of ``task_ids``, transitively, themselves excluded unless reached
    (Airflow's ``get_flat_relatives``)."""
    tasks = dag.task_dict
    found: set[str] = set()
    pending = [t for t in task_ids if t in tasks]
    while pending:
        task = tasks[pending.pop()]
        for other in task.upstream_task_ids if upstream else task.downstream_task_ids:
            if other not in found and other in tasks:
                found.add(other)
                pending.append(other)
    return found


def has_setups(dag: SerializedDAG) -> bool:
    return any(t.is_setup for t in dag.tasks)


def _direct_teardowns(dag: SerializedDAG, setup_id: str, exclude: str) -> list[str]:
    tasks = dag.task_dict
    return [d for d in tasks[setup_id].downstream_task_ids if d in tasks and tasks[d].is_teardown and d != exclude]


def upstream_setups_and_teardowns(dag: SerializedDAG, task_id: str) -> list[str]:
    """The *relevant* upstream setups and their teardowns: a setup is relevant when it has no teardown or one
    of its teardowns is downstream of ``task_id`` (it encloses the task)."""
    tasks = dag.task_dict
    downstream_teardowns = {t for t in relatives(dag, [task_id], upstream=False) if tasks[t].is_teardown}
    found: list[str] = []
    for up in sorted(relatives(dag, [task_id], upstream=True)):
        setup = tasks[up]
        if not setup.is_setup:
            continue
        has_no_teardowns = not any(tasks[d].is_teardown for d in setup.downstream_task_ids if d in tasks)
        if has_no_teardowns or downstream_teardowns.intersection(setup.downstream_task_ids):
            found.append(up)
            found.extend(_direct_teardowns(dag, up, exclude=task_id))
    return found


def relevant_setups(dag: SerializedDAG, task_id: str) -> list[str]:
    """The setups a work task waits for (Airflow's ``get_upstreams_only_setups``)."""
    tasks = dag.task_dict
    return [t for t in upstream_setups_and_teardowns(dag, task_id) if tasks[t].is_setup]


def upstreams_following_setups(dag: SerializedDAG, task_id: str) -> set[str]:
    """Every upstream task and, for each upstream setup, its teardowns (Airflow's
    ``get_upstreams_follow_setups``)."""
    tasks = dag.task_dict
    found = relatives(dag, [task_id], upstream=True)
    for up in list(found):
        if tasks[up].is_setup:
            found.update(_direct_teardowns(dag, up, exclude=task_id))
    return found


def clear_subset(dag: SerializedDAG, task_ids: Iterable[str], *, upstream: bool, downstream: bool) -> set[str]:
    """The tasks a clear adds to ``task_ids`` (Airflow's ``partial_subset(..., exclude_original=True)``):
    relatives in the chosen directions, plus the setups and teardowns that enclose what is cleared, so a
    resource is set up again for the rerun and released after it."""
    tasks = dag.task_dict
    matched = [t for t in task_ids if t in tasks]
    extra: set[str] = set()
    for task_id in matched:
        task = tasks[task_id]
        if downstream:
            for rel in relatives(dag, [task_id], upstream=False):
                extra.add(rel)
                if rel not in matched and not tasks[rel].is_setup and not tasks[rel].is_teardown:
                    extra.update(upstream_setups_and_teardowns(dag, rel))
        if upstream:
            extra |= upstreams_following_setups(dag, task_id)
        elif not task.is_setup and not task.is_teardown:
            extra.update(upstream_setups_and_teardowns(dag, task_id))
        if task.is_setup and not downstream:
            extra.update(_direct_teardowns(dag, task_id, exclude=""))
    return extra


def teardown_scope(dag: SerializedDAG, teardown_id: str) -> set[str]:
    """The tasks between a teardown's direct setups and itself, not directly upstream of it: the teardown waits
    for all of them (Airflow's ``_evaluate_teardown_scope``)."""
    tasks = dag.task_dict
    teardown = tasks[teardown_id]
    indirect = relatives(dag, [teardown_id], upstream=True) - set(teardown.upstream_task_ids)
    if not indirect:
        return set()
    scope: set[str] = set()
    for setup_id in teardown.upstream_task_ids:
        if setup_id in tasks and tasks[setup_id].is_setup:
            scope |= indirect & relatives(dag, [setup_id], upstream=False)
    return scope
