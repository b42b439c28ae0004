"""Priority weight strategies (``weight_rule=``): Airflow's interface, evaluated where user code may run.

Airflow calls a strategy's ``get_weight(ti)`` in the scheduler each time it creates a task instance (try number
0) and each time one is cleared (its current try number). Updraft's scheduler never imports user code, so a
custom strategy is evaluated when the DAG file is parsed: :func:`weights_by_try` asks it for the weight of every
try number from 0 to ``MAX_EVALUATED_TRIES - 1`` and the serialized task carries that table (a later try takes
the last entry). The stand-in task instance it is handed offers what is known at parse time, the task, its ids,
``map_index`` (-1: not a mapped task) and ``try_number``; reading anything that only exists on a real task
instance (``run_id``, ``logical_date``, the state, ...) fails the parse naming the attribute, rather than
scheduling with a weight Airflow would not have computed.

The three built-in strategies are the ``WeightRule`` names; as instances they are mapped back onto those names,
since Updraft computes them for the whole DAG at once (``DAG.priority_weights``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from updraft.sdk.trigger_rule import WeightRule

if TYPE_CHECKING:
    from updraft.sdk.node import TaskNode

__all__ = [
    "MAX_EVALUATED_TRIES",
    "PriorityWeightStrategy",
    "UnevaluableWeightError",
    "get_weight_rule_from_priority_weight_strategy",
    "validate_and_load_priority_weight_strategy",
    "weights_by_try",
]

MAX_EVALUATED_TRIES = 16
"""Try numbers 0..15 are evaluated at parse time; a task cleared past its 15th try keeps the 15th try's weight."""


class PriorityWeightStrategy(ABC):
    """Airflow's interface: ``get_weight(ti)`` returns the task instance's priority weight.

    Strategies are stateless (Airflow stores only the class path): configure variants with class attributes.
    """

    @abstractmethod
    def get_weight(self, ti: Any) -> int:
        """Get the priority weight of a task."""
        raise NotImplementedError("must be implemented by a subclass")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self))

    def __hash__(self) -> int:
        return hash(None)


class _BuiltinStrategy(PriorityWeightStrategy):
    rule: WeightRule

    def get_weight(self, ti: Any) -> int:
        dag = ti.task.dag
        return dag.priority_weights()[ti.task_id] if dag is not None else ti.task.priority_weight


class _AbsolutePriorityWeightStrategy(_BuiltinStrategy):
    """The task's own priority weight."""

    rule = WeightRule.ABSOLUTE


class _DownstreamPriorityWeightStrategy(_BuiltinStrategy):
    """The task's weight plus every downstream task's."""

    rule = WeightRule.DOWNSTREAM


class _UpstreamPriorityWeightStrategy(_BuiltinStrategy):
    """The task's weight plus every upstream task's."""

    rule = WeightRule.UPSTREAM


_BUILTINS: dict[str, type[_BuiltinStrategy]] = {
    f"airflow.task.priority_strategy.{cls.__name__}": cls
    for cls in (_AbsolutePriorityWeightStrategy, _DownstreamPriorityWeightStrategy, _UpstreamPriorityWeightStrategy)
}
_BUILTINS.update({cls.rule.value: cls for cls in list(_BUILTINS.values())})


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _registered(path: str) -> type[PriorityWeightStrategy] | None:
    # lazy: cold start (plugins load only for a strategy not built in)
    from updraft.plugins import registered_priority_weight_strategies

    return _BUILTINS.get(path) or registered_priority_weight_strategies().get(path)


def validate_and_load_priority_weight_strategy(strategy: str | PriorityWeightStrategy | None) -> PriorityWeightStrategy:
    """Airflow's loader: None is absolute, a name or class path must be built in or registered by a plugin."""
    if strategy is None:
        return _AbsolutePriorityWeightStrategy()
    if isinstance(strategy, str):
        with suppress(KeyError):
            return _BUILTINS[strategy]()
        path = strategy
    elif isinstance(strategy, _BuiltinStrategy):
        return type(strategy)()
    else:
        path = _qualname(type(strategy))
    cls = _registered(path)
    if cls is None:
        raise ValueError(f"Unknown priority strategy {path}")
    return cls()


def get_weight_rule_from_priority_weight_strategy(strategy: type[PriorityWeightStrategy]) -> WeightRule:
    """The ``WeightRule`` of a built-in strategy class (KeyError for a custom one, as in Airflow)."""
    if isinstance(strategy, type) and issubclass(strategy, _BuiltinStrategy):
        return strategy.rule
    raise KeyError(strategy)


def load_weight_rule(rule: Any, task_id: str) -> WeightRule | PriorityWeightStrategy:
    """A task's ``weight_rule``: a built-in rule as its ``WeightRule``, a custom strategy as a registered instance."""
    if type(rule) is WeightRule:  # a member is one (the default, every task without a rule of its own)
        return rule
    value = rule.value if isinstance(rule, WeightRule) else rule
    if isinstance(value, str) and WeightRule.is_valid(value):
        return WeightRule(value)
    if not isinstance(value, str | PriorityWeightStrategy):
        raise ValueError(f"The weight_rule must be one of {sorted(WeightRule.all_weight_rules())} or a "
                         f"PriorityWeightStrategy, '{task_id}'; received '{value}'.")
    try:
        strategy = validate_and_load_priority_weight_strategy(value)
    except ValueError as exc:
        raise ValueError(f"{exc} (the weight_rule of task '{task_id}'): use one of "
                         f"{sorted(WeightRule.all_weight_rules())} or a PriorityWeightStrategy a plugin registers "
                         "(AirflowPlugin.priority_weight_strategies)") from None
    if isinstance(strategy, _BuiltinStrategy):
        return strategy.rule
    return strategy


def strategy_path(strategy: PriorityWeightStrategy) -> str:
    """The class path a custom strategy is serialized (and shown by the REST API) as."""
    return _qualname(type(strategy))


class UnevaluableWeightError(AttributeError):
    """A custom strategy read a task instance attribute that does not exist before the scheduler creates it."""


_KNOWN = ("task", "task_id", "dag_id", "map_index", "try_number")


class _ParseTimeTaskInstance:
    """What a custom strategy sees: the attributes known before any run exists (see the module docstring)."""

    def __init__(self, task: TaskNode, try_number: int) -> None:
        # lazy: import cost (the group tree only for a mapped task's weight)
        from updraft.sdk.taskgroup import closest_mapped_group

        self.task = task
        self.task_id = task.task_id
        self.dag_id = task.dag.dag_id if task.dag is not None else None
        self.try_number = try_number
        self._mapped = bool(getattr(task, "is_mapped", False)) or closest_mapped_group(task) is not None

    @property
    def map_index(self) -> int:
        if self._mapped:
            raise UnevaluableWeightError(_unevaluable(self.task, "map_index (the task is mapped)"))
        return -1

    def __getattr__(self, name: str) -> Any:
        raise UnevaluableWeightError(_unevaluable(self.task, name))


def _unevaluable(task: TaskNode, name: str) -> str:
    return (f"the priority weight strategy of task {task.task_id!r} ({type(task.weight_rule).__qualname__}) reads "
            f"ti.{name}: Updraft evaluates custom priority weight strategies when the DAG file is parsed (its "
            f"scheduler runs no user code), where a task instance offers only {', '.join(_KNOWN)}")


def weights_by_try(task: TaskNode, strategy: PriorityWeightStrategy) -> list[int]:
    """``strategy.get_weight`` for try numbers 0..``MAX_EVALUATED_TRIES - 1``, each clamped as Airflow clamps."""
    # lazy: circle (sdk.baseoperator imports this module)
    from updraft.sdk.baseoperator import MAXIMUM_PRIORITY_WEIGHT, MINIMUM_PRIORITY_WEIGHT

    weights = []
    for try_number in range(MAX_EVALUATED_TRIES):
        weight = strategy.get_weight(_ParseTimeTaskInstance(task, try_number))
        if not isinstance(weight, int):
            raise TypeError(f"{strategy_path(strategy)}.get_weight() returned {weight!r} for task "
                            f"{task.task_id!r}; a priority weight is an int")
        weights.append(max(MINIMUM_PRIORITY_WEIGHT, min(MAXIMUM_PRIORITY_WEIGHT, weight)))
    return weights
