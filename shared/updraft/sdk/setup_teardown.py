"""Setup and teardown tasks as Airflow 3 declares them: flags on a task, and the ``with setup >> teardown:`` scope.

A setup prepares a resource (a cluster, a temp table), a teardown releases it. The scheduler treats them
specially: a teardown runs once its setups finished whatever the work tasks did (trigger rule
``all_done_setup_success``), its failure does not fail the run unless ``on_failure_fail_dagrun``, a work task waits
for the setups that enclose it, and clearing a work task clears them too. Here only the DAG-file side lives:

* ``SetupTeardownFlags``: ``is_setup`` / ``is_teardown`` / ``on_failure_fail_dagrun`` (with Airflow's checks),
  ``as_setup()`` / ``as_teardown(setups=...)`` and the context-manager form, for every task;
* ``SetupTeardownContext``: Airflow's ``BaseSetupTeardownContext`` (``sdk/definitions/_internal/
  setup_teardown.py``), ported as is because the edges it wires are the behaviour users rely on: inside
  ``with s >> t:`` the block's work tasks without upstream get ``s`` upstream, those without downstream get ``t``
  downstream, and nested blocks chain their setups and teardowns;
* ``setup`` / ``teardown``: the TaskFlow decorators.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from updraft.sdk.exceptions import AirflowException
from updraft.sdk.trigger_rule import TriggerRule

if TYPE_CHECKING:
    from updraft.sdk.node import TaskNode

Operators = Any  # one task, or a list of tasks (Airflow's ``AbstractOperator | list[AbstractOperator]``)


class SetupTeardownFlags:
    """What Airflow's ``AbstractOperator`` adds to every task for setup/teardown (BaseOperator and mapped)."""

    task_id: str
    trigger_rule: TriggerRule
    _is_setup: bool = False
    _is_teardown: bool = False
    _on_failure_fail_dagrun: bool = False

    @property
    def is_setup(self) -> bool:
        return self._is_setup

    @is_setup.setter
    def is_setup(self, value: bool) -> None:
        if value and self._is_teardown:
            raise ValueError(f"Cannot mark task '{self.task_id}' as setup; task is already a teardown.")
        self._is_setup = bool(value)

    @property
    def is_teardown(self) -> bool:
        return self._is_teardown

    @is_teardown.setter
    def is_teardown(self, value: bool) -> None:
        if value and self._is_setup:
            raise ValueError(f"Cannot mark task '{self.task_id}' as teardown; task is already a setup.")
        self._is_teardown = bool(value)

    @property
    def on_failure_fail_dagrun(self) -> bool:
        """Whether this teardown's failure fails the run (by default a teardown never decides the run)."""
        return self._on_failure_fail_dagrun

    @on_failure_fail_dagrun.setter
    def on_failure_fail_dagrun(self, value: bool) -> None:
        if value is True and self._is_teardown is not True:
            raise ValueError(f"Cannot set task on_failure_fail_dagrun for '{self.task_id}' because it is not a "
                             "teardown task.")
        self._on_failure_fail_dagrun = value

    def as_setup(self) -> Any:
        self.is_setup = True
        return self

    def as_teardown(self, *, setups: Any = None, on_failure_fail_dagrun: bool | None = None) -> Any:
        mark_teardown(self, setups=setups, on_failure_fail_dagrun=on_failure_fail_dagrun)
        return self

    def __enter__(self) -> type[SetupTeardownContext]:
        if not self.is_setup and not self.is_teardown:
            raise RuntimeError("Only setup/teardown tasks can be used as context managers.")
        SetupTeardownContext.push_setup_teardown_task(self)
        return SetupTeardownContext

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        SetupTeardownContext.set_work_task_roots_and_leaves()


def mark_teardown(task: Any, *, setups: Any, on_failure_fail_dagrun: bool | None) -> None:
    """``as_teardown``: the rule becomes ``all_done_setup_success`` and each setup is marked and wired upstream."""
    # lazy: import cost (`from airflow.sdk import DAG` loads no dependency-wiring module)
    from updraft.sdk.mixins import DependencyMixin

    task.is_teardown = True
    task.trigger_rule = TriggerRule.ALL_DONE_SETUP_SUCCESS
    if on_failure_fail_dagrun is not None:
        task.on_failure_fail_dagrun = on_failure_fail_dagrun
    if setups is not None:
        setup_tasks: Iterable[Any] = [setups] if isinstance(setups, DependencyMixin) else setups
        for setup_task in setup_tasks:
            setup_task.is_setup = True
            setup_task >> task


class BaseSetupTeardownContext:
    """Airflow's context-manager state for ``with setup >> teardown:`` blocks (class-level, as in Airflow)."""

    active: bool = False
    context_map: dict[Any, list[Any]] = {}
    _context_managed_setup_task: Operators = []
    _previous_context_managed_setup_task: list[Operators] = []
    _context_managed_teardown_task: Operators = []
    _previous_context_managed_teardown_task: list[Operators] = []
    _teardown_downstream_of_setup: Operators = []
    _previous_teardown_downstream_of_setup: list[Operators] = []
    _setup_upstream_of_teardown: Operators = []
    _previous_setup_upstream_of_teardown: list[Operators] = []

    @classmethod
    def _push(cls, name: str, tasks: Operators) -> None:
        """Make ``tasks`` the current value of the stacked attribute ``_<name>``, keeping the one it replaces."""
        current = getattr(cls, f"_{name}")
        if current and current != tasks:
            getattr(cls, f"_previous_{name}").append(current)
        setattr(cls, f"_{name}", tasks)

    @classmethod
    def _pop(cls, name: str, *, upstream: bool) -> Operators:
        """Leave a block: restore ``_<name>``'s previous value, wired to the value that ends (Airflow's pops)."""
        old = getattr(cls, f"_{name}")
        previous = getattr(cls, f"_previous_{name}")
        if previous:
            setattr(cls, f"_{name}", previous.pop())
            restored = getattr(cls, f"_{name}")
            if restored and old:
                cls.set_dependency(old, restored, upstream=upstream)
        else:
            setattr(cls, f"_{name}", [])
        return old

    @classmethod
    def push_context_managed_setup_task(cls, task: Operators) -> None:
        cls._push("context_managed_setup_task", task)

    @classmethod
    def push_context_managed_teardown_task(cls, task: Operators) -> None:
        cls._push("context_managed_teardown_task", task)

    @classmethod
    def pop_context_managed_setup_task(cls) -> Operators:
        return cls._pop("context_managed_setup_task", upstream=False)

    @classmethod
    def pop_context_managed_teardown_task(cls) -> Operators:
        return cls._pop("context_managed_teardown_task", upstream=True)

    @classmethod
    def pop_teardown_downstream_of_setup(cls) -> Operators:
        return cls._pop("teardown_downstream_of_setup", upstream=True)

    @classmethod
    def pop_setup_upstream_of_teardown(cls) -> Operators:
        return cls._pop("setup_upstream_of_teardown", upstream=False)

    @classmethod
    def set_dependency(cls, receiving_task: Operators, new_task: Operators, upstream: bool = True) -> None:
        for task in new_task if isinstance(new_task, (list, tuple)) else [new_task]:
            if upstream:
                task.set_upstream(receiving_task)
            else:
                task.set_downstream(receiving_task)

    @classmethod
    def update_context_map(cls, task: TaskNode) -> None:
        if task.is_setup or task.is_teardown:
            return
        for managed in (cls._context_managed_setup_task, cls._context_managed_teardown_task):
            if managed:
                cls.context_map.setdefault(tuple(managed) if isinstance(managed, list) else managed,
                                           []).append(task)

    @classmethod
    def push_setup_teardown_task(cls, operator: Operators) -> None:
        first = operator[0] if isinstance(operator, list) else operator
        if first.is_teardown:
            cls._push_tasks(operator)
        elif first.is_setup:
            cls._push_tasks(operator, setup=True)
        cls.active = True

    @classmethod
    def _push_tasks(cls, operator: Operators, setup: bool = False) -> None:
        if isinstance(operator, list) and any(task.is_setup != operator[0].is_setup for task in operator):
            cls.error("All tasks in the list must be either setup or teardown tasks")
        if setup:
            cls.push_context_managed_setup_task(operator)
            cls._update_teardown_downstream(operator)
        else:
            cls.push_context_managed_teardown_task(operator)
            cls._update_setup_upstream(operator)

    @staticmethod
    def _nearest(operator: Operators, start: list[Any], wanted: Callable[[Any], bool]) -> list[Any]:
        """Airflow's ``_get_teardowns`` / ``_get_setups``: walk the graph out from ``start`` until some task
        matches, and return the matches of that step."""
        first = operator[0] if isinstance(operator, list) else operator
        tasks = start
        while True:
            found = [t for t in tasks if wanted(t)]
            if found:
                return found
            tasks = [x for task in tasks for x in task.downstream_list + task.upstream_list if x != first]
            if not tasks:
                return []

    @classmethod
    def _update_teardown_downstream(cls, operator: Operators) -> None:
        first = operator[0] if isinstance(operator, list) else operator
        cls._push("teardown_downstream_of_setup",
                  cls._nearest(operator, first.downstream_list, lambda t: t.is_teardown))

    @classmethod
    def _update_setup_upstream(cls, operator: Operators) -> None:
        first = operator[0] if isinstance(operator, list) else operator
        cls._push("setup_upstream_of_teardown", cls._nearest(operator, first.upstream_list, lambda t: t.is_setup))

    @classmethod
    def set_teardown_task_as_leaves(cls, leaves: Operators) -> None:
        teardown_task = cls._teardown_downstream_of_setup
        if cls._context_managed_teardown_task:
            cls.set_dependency(cls._context_managed_teardown_task, teardown_task)
        else:
            cls.set_dependency(leaves, teardown_task)

    @classmethod
    def set_setup_task_as_roots(cls, roots: Operators) -> None:
        setup_task = cls._setup_upstream_of_teardown
        if cls._context_managed_setup_task:
            cls.set_dependency(cls._context_managed_setup_task, setup_task, upstream=False)
        else:
            cls.set_dependency(roots, setup_task, upstream=False)

    @classmethod
    def set_work_task_roots_and_leaves(cls) -> None:
        """On leaving the block: wire the block's work tasks between its setups and teardowns."""
        if setup_task := cls._context_managed_setup_task:
            if isinstance(setup_task, list):
                setup_task = tuple(setup_task)
            tasks_in_context = [x for x in cls.context_map.get(setup_task, [])
                                if not x.is_teardown and not x.is_setup]
            if tasks_in_context:
                roots = [task for task in tasks_in_context if not task.upstream_list]
                if not roots:
                    setup_task >> tasks_in_context[0]
                else:
                    cls.set_dependency(roots, setup_task, upstream=False)
                leaves = [task for task in tasks_in_context if not task.downstream_list]
                cls.set_teardown_task_as_leaves(leaves or tasks_in_context[-1])

        if teardown_task := cls._context_managed_teardown_task:
            if isinstance(teardown_task, list):
                teardown_task = tuple(teardown_task)
            tasks_in_context = [x for x in cls.context_map.get(teardown_task, [])
                                if not x.is_teardown and not x.is_setup]
            if tasks_in_context:
                leaves = [task for task in tasks_in_context if not task.downstream_list]
                if not leaves:
                    teardown_task << tasks_in_context[-1]
                else:
                    cls.set_dependency(leaves, teardown_task)
                roots = [task for task in tasks_in_context if not task.upstream_list]
                cls.set_setup_task_as_roots(roots or tasks_in_context[0])
        cls.set_setup_teardown_relationships()
        cls.active = False

    @classmethod
    def set_setup_teardown_relationships(cls) -> None:
        """Nested blocks: the outer setup runs before the inner one, the inner teardown before the outer one."""
        setup_task = cls.pop_context_managed_setup_task()
        teardown_task = cls.pop_context_managed_teardown_task()
        if isinstance(setup_task, list):
            setup_task = tuple(setup_task)
        if isinstance(teardown_task, list):
            teardown_task = tuple(teardown_task)
        cls.pop_teardown_downstream_of_setup()
        cls.pop_setup_upstream_of_teardown()
        cls.context_map.pop(setup_task, None)
        cls.context_map.pop(teardown_task, None)

    @classmethod
    def error(cls, message: str) -> None:
        cls.active = False
        cls.context_map.clear()
        cls._context_managed_setup_task = []
        cls._context_managed_teardown_task = []
        cls._previous_context_managed_setup_task = []
        cls._previous_context_managed_teardown_task = []
        raise ValueError(message)


class SetupTeardownContext(BaseSetupTeardownContext):
    """What ``with setup_task:`` returns: ``add_task`` puts a task created outside the block into it."""

    @staticmethod
    def add_task(task: Any) -> None:
        # lazy: import cost (`DAG` alone stays without XComArg)
        from updraft.sdk.xcom_arg import PlainXComArg

        if not SetupTeardownContext.active:
            raise AirflowException("Cannot add task to context outside the context manager.")
        if isinstance(task, PlainXComArg):
            task = task.operator
        SetupTeardownContext.update_context_map(task)


class ContextWrapper(list):
    """``with context_wrapper([s1, s2]):``: several setups (or teardowns) as one block (Airflow's name)."""

    def __init__(self, tasks: list[Any]) -> None:
        self.tasks = tasks
        super().__init__(tasks)

    def __enter__(self) -> type[SetupTeardownContext]:
        operators = [getattr(task, "operator", task) for task in self.tasks]
        if any(not op.is_setup and not op.is_teardown for op in operators):
            raise AirflowException("Only setup/teardown tasks can be used as context managers.")
        SetupTeardownContext.push_setup_teardown_task(operators)
        return SetupTeardownContext

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        SetupTeardownContext.set_work_task_roots_and_leaves()


context_wrapper = ContextWrapper


def _as_task_decorator(func: Any) -> Any:
    # lazy: circle (sdk.decorators imports this module)
    from updraft.sdk.decorators import task
    from updraft.sdk.decorators.task_group import _TaskGroupFactory

    if isinstance(func, types.FunctionType):
        func = task(func)
    if isinstance(func, _TaskGroupFactory):
        raise AirflowException("Task groups cannot be marked as setup or teardown.")
    return func


def setup(func: Callable) -> Any:
    """``@setup``: the TaskFlow task (or ``@task``-decorated function) is a setup task."""
    decorated = _as_task_decorator(func)
    decorated.is_setup = True
    return decorated


def teardown(_func: Callable | None = None, *, on_failure_fail_dagrun: bool = False) -> Any:
    """``@teardown`` / ``@teardown(on_failure_fail_dagrun=True)``: the task is a teardown task."""

    def wrap(func: Callable) -> Any:
        decorated = _as_task_decorator(func)
        decorated.is_teardown = True
        decorated.on_failure_fail_dagrun = on_failure_fail_dagrun
        return decorated

    return wrap if _func is None else wrap(_func)


def validate_setup_teardown(tasks: Iterable[Any]) -> None:
    """Airflow's ``DAG.validate_setup_teardown``: a setup's direct work downstreams keep ``all_success``, so
    clearing an indirect setup behaves the same everywhere."""
    for task in tasks:
        if task.is_setup:
            for down_task in task.downstream_list:
                if not down_task.is_teardown and down_task.trigger_rule != TriggerRule.ALL_SUCCESS:
                    raise ValueError("Setup tasks must be followed with trigger rule ALL_SUCCESS.")
