"""The stacks behind ``with DAG(...)`` and ``with TaskGroup(...)``: operators created inside a block join it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from updraft.sdk.dag import DAG
    from updraft.sdk.taskgroup import TaskGroup


class DagContext:
    _stack: list[DAG] = []

    @classmethod
    def push(cls, dag: DAG) -> None:
        cls._stack.append(dag)

    @classmethod
    def pop(cls) -> DAG | None:
        return cls._stack.pop() if cls._stack else None

    @classmethod
    def current(cls) -> DAG | None:
        return cls._stack[-1] if cls._stack else None


class TaskGroupContext:
    _stack: list[TaskGroup] = []

    @classmethod
    def push(cls, group: TaskGroup) -> None:
        cls._stack.append(group)

    @classmethod
    def pop(cls) -> TaskGroup | None:
        return cls._stack.pop() if cls._stack else None

    @classmethod
    def current(cls, dag: DAG | None = None) -> TaskGroup | None:
        """The innermost open group, or the root group of ``dag`` when no group block is open for it."""
        if cls._stack and (dag is None or cls._stack[-1].dag is dag):
            return cls._stack[-1]
        return dag.task_group if dag is not None else None
