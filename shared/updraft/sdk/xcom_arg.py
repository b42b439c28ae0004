"""XComArg: a reference to a task's future XCom value, used to pass data and to wire dependencies.

Resolving the value happens at run time (the task runtime); here the reference carries the producing task, the
key, and any ``map``/``zip``/``concat`` transformations so the DAG can be serialized and the scheduler can see which
task a mapped task waits for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from updraft.sdk.exceptions import AirflowException
from updraft.sdk.mixins import DependencyMixin
from updraft.sdk.param import NOTSET

if TYPE_CHECKING:
    from updraft.sdk.edges import EdgeModifier
    from updraft.sdk.node import TaskNode

XCOM_RETURN_KEY = "return_value"


class XComArg(DependencyMixin):
    """Base of the XCom reference types; ``task >> xcom_arg`` wires the producing task.

    ``XComArg(task)`` (and ``XComArg(task, key)``) build a plain reference, as in Airflow.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> XComArg:
        if cls is XComArg:
            return PlainXComArg(*args, **kwargs)
        return super().__new__(cls)

    @staticmethod
    def iter_xcom_references(arg: Any) -> Iterator[tuple[TaskNode, str]]:
        """Every (task, key) referenced anywhere inside ``arg`` (lists, dicts, nested XComArgs)."""
        if isinstance(arg, XComArg):
            yield from arg.iter_references()
        elif isinstance(arg, (list, tuple, set, frozenset)):
            for item in arg:
                yield from XComArg.iter_xcom_references(item)
        elif isinstance(arg, Mapping):
            for item in arg.values():
                yield from XComArg.iter_xcom_references(item)
        elif isinstance(arg, MappedArgument):
            yield from XComArg.iter_xcom_references(arg.expand_input.value)

    @staticmethod
    def apply_upstream_relationship(op: TaskNode, arg: Any) -> None:
        for operator, _ in XComArg.iter_xcom_references(arg):
            if operator is not op:
                op.set_upstream(operator)

    def iter_references(self) -> Iterator[tuple[TaskNode, str]]:
        raise NotImplementedError

    @property
    def roots(self) -> list[TaskNode]:
        return [op for op, _ in self.iter_references()]

    @property
    def leaves(self) -> list[TaskNode]:
        return [op for op, _ in self.iter_references()]

    def set_upstream(self, other: Any, edge_modifier: EdgeModifier | None = None) -> None:
        for op, _ in self.iter_references():
            op.set_upstream(other, edge_modifier)

    def set_downstream(self, other: Any, edge_modifier: EdgeModifier | None = None) -> None:
        for op, _ in self.iter_references():
            op.set_downstream(other, edge_modifier)

    def map(self, f: Callable[[Any], Any]) -> MapXComArg:
        return MapXComArg(self, [f])

    def zip(self, *others: XComArg, fillvalue: Any = NOTSET) -> ZipXComArg:
        return ZipXComArg([self, *others], fillvalue=fillvalue)

    def concat(self, *others: XComArg) -> ConcatXComArg:
        return ConcatXComArg([self, *others])

    def __iter__(self):
        raise TypeError("'XComArg' object is not iterable")


class PlainXComArg(XComArg):
    """``task.output`` or a TaskFlow call's result; ``result["key"]`` selects another XCom key."""

    def __init__(self, operator: TaskNode, key: str = XCOM_RETURN_KEY) -> None:
        self.operator = operator
        self.key = key

    def iter_references(self) -> Iterator[tuple[TaskNode, str]]:
        yield self.operator, self.key

    # Setup/teardown: a TaskFlow call's result stands for its task (Airflow's PlainXComArg does the same).
    @property
    def is_setup(self) -> bool:
        return self.operator.is_setup

    @is_setup.setter
    def is_setup(self, value: bool) -> None:
        self.operator.is_setup = value

    @property
    def is_teardown(self) -> bool:
        return self.operator.is_teardown

    @is_teardown.setter
    def is_teardown(self, value: bool) -> None:
        self.operator.is_teardown = value

    @property
    def on_failure_fail_dagrun(self) -> bool:
        return self.operator.on_failure_fail_dagrun

    @on_failure_fail_dagrun.setter
    def on_failure_fail_dagrun(self, value: bool) -> None:
        self.operator.on_failure_fail_dagrun = value

    def as_setup(self) -> PlainXComArg:
        self.operator.is_setup = True
        return self

    def as_teardown(self, *, setups: Any = None, on_failure_fail_dagrun: bool | None = None) -> PlainXComArg:
        # lazy: cold start (the worker resolves XComArgs without the setup/teardown authoring layer)
        from updraft.sdk.setup_teardown import mark_teardown

        mark_teardown(self.operator, setups=setups, on_failure_fail_dagrun=on_failure_fail_dagrun)
        return self

    def __enter__(self) -> Any:
        # lazy: cold start (the worker resolves XComArgs without the setup/teardown authoring layer)
        from updraft.sdk.setup_teardown import SetupTeardownContext

        if not self.operator.is_setup and not self.operator.is_teardown:
            raise AirflowException("Only setup/teardown tasks can be used as context managers.")
        SetupTeardownContext.push_setup_teardown_task(self.operator)
        return SetupTeardownContext

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        # lazy: cold start (the worker resolves XComArgs without the setup/teardown authoring layer)
        from updraft.sdk.setup_teardown import SetupTeardownContext

        SetupTeardownContext.set_work_task_roots_and_leaves()

    def __getitem__(self, item: str) -> PlainXComArg:
        if not isinstance(item, str):
            raise ValueError(f"XComArg only supports str lookup, received {type(item).__name__}")
        return PlainXComArg(self.operator, item)

    def map(self, f: Callable[[Any], Any]) -> MapXComArg:
        if self.key != XCOM_RETURN_KEY:
            raise ValueError("cannot map against non-return XCom")
        return super().map(f)

    def zip(self, *others: XComArg, fillvalue: Any = NOTSET) -> ZipXComArg:
        if self.key != XCOM_RETURN_KEY:
            raise ValueError("cannot map against non-return XCom")
        return super().zip(*others, fillvalue=fillvalue)

    def concat(self, *others: XComArg) -> ConcatXComArg:
        if self.key != XCOM_RETURN_KEY:
            raise ValueError("cannot concatenate non-return XCom")
        return super().concat(*others)

    def __str__(self) -> str:
        """The Jinja that pulls this XCom, for Airflow-2 style ``f"{task.output}"`` in templated strings."""
        pulled = f"task_ids='{self.operator.task_id}', dag_id='{self.operator.dag_id}', key='{self.key}'"
        return f"{{{{ task_instance.xcom_pull({pulled}) }}}}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PlainXComArg) and other.operator is self.operator and other.key == self.key

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if self.key == XCOM_RETURN_KEY:
            return f"XComArg({self.operator!r})"
        return f"XComArg({self.operator!r}, {self.key!r})"


class MapXComArg(XComArg):
    """``xcom_arg.map(f)``: the referenced sequence with ``f`` applied to each item at run time."""

    def __init__(self, arg: XComArg, callables: Sequence[Callable[[Any], Any]]) -> None:
        for c in callables:
            if getattr(c, "_airflow_is_task_decorator", False):
                raise ValueError("map() argument must be a plain function, not a @task operator")
        self.arg = arg
        self.callables = list(callables)

    def iter_references(self) -> Iterator[tuple[TaskNode, str]]:
        yield from self.arg.iter_references()

    def map(self, f: Callable[[Any], Any]) -> MapXComArg:
        return MapXComArg(self.arg, [*self.callables, f])


class ZipXComArg(XComArg):
    def __init__(self, args: Sequence[XComArg], *, fillvalue: Any = NOTSET) -> None:
        if not args:
            raise ValueError("At least one input is required")
        self.args = list(args)
        self.fillvalue = fillvalue

    def iter_references(self) -> Iterator[tuple[TaskNode, str]]:
        for arg in self.args:
            yield from arg.iter_references()


class ConcatXComArg(XComArg):
    def __init__(self, args: Sequence[XComArg]) -> None:
        if not args:
            raise ValueError("At least one input is required")
        self.args = list(args)

    def iter_references(self) -> Iterator[tuple[TaskNode, str]]:
        for arg in self.args:
            yield from arg.iter_references()

    def concat(self, *others: XComArg) -> ConcatXComArg:
        # a.concat(b).concat(c) is one concatenation, as in Airflow (and serializes the same way).
        return ConcatXComArg([*self.args, *others])


class MappedArgument:
    """What a mapped task group's function receives for a mapped argument: its value for the running map index
    (Airflow's stand-in of the same name). Tasks inside the group pass it on like any value; the task runtime
    replaces it, and it names its key when shown."""

    def __init__(self, expand_input: Any, key: str) -> None:
        # lazy: circle (sdk.mappedoperator imports this module)
        from updraft.sdk.mappedoperator import DictOfListsExpandInput

        # Airflow's own refusal (its MappedArgument validator): a group expanded over an enclosing group's argument
        if isinstance(expand_input, DictOfListsExpandInput) and any(
                isinstance(v, MappedArgument) for v in expand_input.value.values()):
            raise ValueError("Nested Mapped TaskGroups are not yet supported")
        self.expand_input = expand_input
        self.key = key

    def iter_references(self) -> Iterator[tuple[TaskNode, str]]:
        yield from XComArg.iter_xcom_references(self.expand_input.value)

    def __repr__(self) -> str:
        return f"MappedArgument(key={self.key!r})"
