"""The stacks behind ``with DAG(...)`` and ``with TaskGroup(...)``: operators created inside a block join it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

if TYPE_CHECKING:
    from updraft.sdk.dag import DAG
    from updraft.sdk.taskgroup import TaskGroup

T = TypeVar("T")


class _ContextStack(Generic[T]):
    """Open ``with`` blocks of one kind, innermost last.

    Class-level, so that operator constructors anywhere in the DAG file see the blocks that enclose them;
    each subclass gets a stack of its own, so DAG and group blocks nest independently.
    """

    _stack: ClassVar[list[Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._stack = []

    @classmethod
    def push(cls, item: T) -> None:
        cls._stack.append(item)

    @classmethod
    def pop(cls) -> T | None:
        return cls._stack.pop() if cls._stack else None

    @classmethod
    def current(cls) -> T | None:
        return cls._stack[-1] if cls._stack else None


class DagContext(_ContextStack["DAG"]):
    """Open ``with DAG(...)`` blocks: a task created without ``dag=`` joins the innermost."""


class TaskGroupContext(_ContextStack["TaskGroup"]):
    """Open ``with TaskGroup(...)`` blocks; a group only claims tasks of its own DAG."""

    @classmethod
    def current(cls, dag: DAG | None = None) -> TaskGroup | None:
        """The innermost open group, or the root group of ``dag`` when no group block is open for it."""
        if cls._stack and (dag is None or cls._stack[-1].dag is dag):
            return cls._stack[-1]
        return dag.task_group if dag is not None else None
