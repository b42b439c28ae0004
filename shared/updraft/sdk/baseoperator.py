"""BaseOperator: one task as a DAG author declares it, validated the way Airflow 3 validates it.

``default_args`` are applied by a metaclass that wraps every subclass ``__init__`` (as Airflow's
``BaseOperatorMeta`` does), so an argument missing from the call is filled from the DAG's, the enclosing
TaskGroup's and the task's own ``default_args`` before any constructor runs.
"""

from __future__ import annotations

import copy
import functools
import inspect
import itertools
import math
import operator
import warnings
from abc import ABCMeta
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from updraft import airflow_config
from updraft.model.identifiers import validate_key
from updraft.sdk import timezone
from updraft.sdk._internal.argument_support import refuse_unsupported
from updraft.sdk._internal.class_facts import known_per_class
from updraft.sdk._internal.contexts import DagContext, TaskGroupContext
from updraft.sdk.compute import resolve_compute
from updraft.sdk.exceptions import (
    AirflowException,
    TaskDeferralError,
    TaskDeferralTimeout,
    TaskDeferred,
    UnsupportedFeatureError,
)
from updraft.sdk.logging_mixin import LoggingMixin
from updraft.sdk.mixins import DependencyMixin
from updraft.sdk.node import TaskNode
from updraft.sdk.param import ParamsDict
from updraft.sdk.priority_strategy import PriorityWeightStrategy, load_weight_rule
from updraft.sdk.setup_teardown import SetupTeardownContext
from updraft.sdk.trigger_rule import TriggerRule, WeightRule
from updraft.sdk.xcom_arg import PlainXComArg, XComArg

if TYPE_CHECKING:
    from updraft.sdk.dag import DAG
    from updraft.sdk.mappedoperator import OperatorPartial
    from updraft.sdk.taskgroup import TaskGroup


# Airflow reads these operator defaults from its configuration when the SDK is imported, so the parser's
# environment sets them for every file.
DEFAULT_OWNER = airflow_config.get("operators", "default_owner", "airflow")
DEFAULT_POOL_NAME = "default_pool"
DEFAULT_POOL_SLOTS = 1
DEFAULT_PRIORITY_WEIGHT = 1
MINIMUM_PRIORITY_WEIGHT = -2147483648
MAXIMUM_PRIORITY_WEIGHT = 2147483647
DEFAULT_QUEUE = airflow_config.get("operators", "default_queue", "default")
DEFAULT_RETRIES = airflow_config.get_int("core", "default_task_retries", 0)
DEFAULT_RETRY_DELAY = timedelta(seconds=airflow_config.get_int("core", "default_task_retry_delay", 300))
MAX_RETRY_DELAY = timedelta(seconds=airflow_config.get_int("core", "max_task_retry_delay", 24 * 60 * 60))
DEFAULT_TASK_EXECUTION_TIMEOUT = airflow_config.get_seconds("core", "default_task_execution_timeout")
DEFAULT_WEIGHT_RULE = WeightRule(airflow_config.get("core", "default_task_weight_rule", WeightRule.DOWNSTREAM))

# Arguments Airflow 2 accepted and Airflow 3 removed: say so instead of a bare "invalid argument".
_REMOVED_ARGS = {
    "task_concurrency": "renamed to max_active_tis_per_dag",
    "provide_context": "the context is always passed to callables that accept it",
}

# Airflow 3 checks these types after construction (``BASEOPERATOR_ARGS_EXPECTED_TYPES``); None is always allowed.
_EXPECTED_TYPES: dict[str, Any] = {
    "task_id": str,
    "email": (str, Sequence),
    "email_on_retry": bool,
    "email_on_failure": bool,
    "retries": int,
    "retry_exponential_backoff": (int, float),
    "depends_on_past": bool,
    "ignore_first_depends_on_past": bool,
    "wait_for_past_depends_before_skipping": bool,
    "wait_for_downstream": bool,
    "priority_weight": int,
    "queue": str,
    "pool": str,
    "pool_slots": int,
    "trigger_rule": str,
    "run_as_user": str,
    "map_index_template": str,
    "max_active_tis_per_dag": int,
    "max_active_tis_per_dagrun": int,
    "executor": str,
    "do_xcom_push": bool,
    "multiple_outputs": bool,
    "doc": str,
    "doc_md": str,
    "doc_json": str,
    "doc_yaml": str,
    "doc_rst": str,
    "task_display_name": str,
    "logger_name": str,
    "allow_nested_operators": bool,
    "start_date": datetime,
    "end_date": datetime,
}


class InvalidOperatorArguments(AirflowException, TypeError):
    """Unknown keyword arguments to an operator: a TypeError in Airflow 3, an AirflowException in Airflow 2.

    Being both lets DAG-file tests written for either version catch it.
    """


_CHECKED_NAMES = tuple(_EXPECTED_TYPES)
_checked_values = operator.attrgetter(*_CHECKED_NAMES)
# Types whose instances are what they say (``isinstance`` answers by the type alone: no ``__class__`` of their
# own, as a proxy has) and the tuples of them, in ``_CHECKED_NAMES``'s order, that a task's values passed with.
_PLAIN_TYPES = frozenset({type(None), str, bool, int, float, list, tuple, datetime, TriggerRule})
_PASSED_SHAPES: set[tuple[type, ...]] = set()


def _check_instance_types(node: Any) -> None:
    """Airflow's check of ``_EXPECTED_TYPES`` after construction; None is always allowed.

    Construction is hot at parse time (every try's child imports its DAG file again) and a DAG's tasks mostly
    pass values of the same types: values whose types (all plain) passed before pass again without the checks,
    as ``isinstance`` of a plain type's instance depends on the type alone (an ABC's registrations only add)."""
    try:
        values = _checked_values(node)
    except AttributeError:  # a class without one of the attributes: checked as absent, not remembered
        values = tuple(getattr(node, name, None) for name in _CHECKED_NAMES)
    shape = tuple(map(type, values))
    if shape in _PASSED_SHAPES:
        return
    for name, value in zip(_CHECKED_NAMES, values, strict=True):
        types = _EXPECTED_TYPES[name]
        if value is not None and not isinstance(value, types):
            raise TypeError(f"{name!r} for task {node.task_id!r} expects {types}, got {type(value)} with value "
                            f"{value!r}")
    if _PLAIN_TYPES.issuperset(shape) and len(_PASSED_SHAPES) < 1024:
        _PASSED_SHAPES.add(shape)


def _defaults_applied(func):
    """Wrap an operator ``__init__`` so missing keyword arguments come from the merged ``default_args``."""
    sig = inspect.signature(func)
    params = {
        name: p for name, p in sig.parameters.items()
        if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }
    required = {name for name, p in params.items() if p.default is p.empty}

    @functools.wraps(func)
    def apply_defaults(self: BaseOperator, *args: Any, **kwargs: Any) -> None:
        if args:
            raise TypeError("Use keyword arguments when initializing operators")
        outermost = not hasattr(self, "_init_kwargs")
        if outermost:
            # A detached instance is a mapped task's prototype: validated, never placed in a DAG.
            _assign(self, {"_detached": kwargs.pop("_updraft_detached", False), "_init_kwargs": dict(kwargs)})
        if self._detached:
            dag, group = None, None
        else:
            dag = kwargs.get("dag") or DagContext.current()
            group = kwargs.get("task_group") or TaskGroupContext.current(dag)
        merged = merged_default_args(dag, group, kwargs.get("default_args"))
        if outermost:
            if not self._detached:
                kwargs["params"] = merged_params(dag, kwargs.get("params"), kwargs.get("default_args"))
            hook = getattr(self, "_hook_apply_defaults", None)
            if hook is not None:
                kwargs = hook(kwargs, merged)
        for name, value in merged.items():
            if name in params and name not in kwargs and name != "params":
                kwargs[name] = value
        if not required.issubset(kwargs):
            missing = sorted(required - set(kwargs))
            task_id = kwargs.get("task_id", "?")
            raise TypeError(f"missing keyword argument{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(repr(m) for m in missing)} for {type(self).__name__} "
                            f"(task_id: {task_id})")
        if outermost:
            kwargs.setdefault("dag", dag)
            kwargs.setdefault("task_group", group)
        func(self, **kwargs)
        if outermost:
            self._finish_init()

    apply_defaults.__updraft_wrapped__ = True  # type: ignore[attr-defined]
    return apply_defaults


def merged_default_args(dag: DAG | None, group: TaskGroup | None, own: dict | None) -> dict[str, Any]:
    """DAG defaults, overridden by each enclosing group's, overridden by the task's own."""
    merged: dict[str, Any] = dict(dag.default_args) if dag is not None else {}
    chain_of_groups = []
    while group is not None:
        chain_of_groups.append(group)
        group = group.parent_group
    for g in reversed(chain_of_groups):
        merged.update(g.default_args)
    if own is not None and not isinstance(own, Mapping):
        raise TypeError(f"default_args must be a mapping, got {type(own)}")
    merged.update(own or {})
    return merged


def merged_params(dag: DAG | None, task_params: Any, own_default_args: Any) -> ParamsDict:
    """A task's params as Airflow builds them: the DAG's, then the task's own, then its ``default_args["params"]``."""
    if dag is None:
        params = ParamsDict()
    elif dag.params:
        params = copy.deepcopy(dag.params)
    else:  # the copy of an empty one, without deepcopy's machinery (every task of most DAGs, at every parse)
        params = ParamsDict(suppress_exception=dag.params.suppress_exception)
    if task_params:
        if not isinstance(task_params, Mapping):
            raise TypeError(f"params must be a mapping, got {type(task_params)}")
        params.update(ParamsDict(task_params))
    if isinstance(own_default_args, Mapping) and own_default_args.get("params"):
        params.update(ParamsDict(own_default_args["params"]))
    return params


class BaseOperatorMeta(ABCMeta):
    """Applies ``default_args`` to every subclass ``__init__``; an ``ABCMeta`` as Airflow's, so an operator may also
    derive from ``abc.ABC`` (``class X(BaseOperator, ABC)``) and declare abstract methods."""

    def __new__(mcls, name: str, bases: tuple, namespace: dict, **kwargs: Any):
        init = namespace.get("__init__")
        if init is not None and not getattr(init, "__updraft_wrapped__", False):
            namespace["__init__"] = _defaults_applied(init)
        return super().__new__(mcls, name, bases, namespace, **kwargs)


def _as_timedelta(value: Any, name: str, task_id: str) -> timedelta | None:
    if value is None or isinstance(value, timedelta):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return timedelta(seconds=value)
    raise TypeError(f"'{name}' of task '{task_id}' must be a timedelta or a number of seconds, "
                    f"not {type(value).__name__}")


def parse_retries(retries: Any, task_id: str) -> int:
    """Airflow's conversion: ``None`` is 0, anything ``int()`` accepts ("3", 2.0) is converted."""
    if retries is None:
        return DEFAULT_RETRIES
    if type(retries) is int:
        return retries
    try:
        return int(retries)
    except (TypeError, ValueError):
        raise TypeError(f"'retries' type must be int, not {type(retries).__name__} (task '{task_id}')") from None


def _checked_retry_policy(policy: Any, task_id: str) -> Any:
    if policy is None:  # most tasks: no import statement run (each costs a lookup, at every task's construction)
        return None
    # lazy: import cost (only a task given retry_policy= needs it)
    from updraft.sdk.retry_policy import RetryPolicy

    if not isinstance(policy, RetryPolicy):
        raise TypeError(f"'retry_policy' for task {task_id!r} expects a RetryPolicy, got {type(policy).__name__}")
    return policy


def validate_trigger_rule(rule: Any, task_id: str, dag_id: str | None) -> TriggerRule:
    if type(rule) is TriggerRule:  # a member is one (the default, every task without a rule of its own)
        return rule
    value = rule.value if isinstance(rule, TriggerRule) else rule
    if not isinstance(value, str) or not TriggerRule.is_valid(value):
        hint = _REMOVED_TRIGGER_RULES.get(value) if isinstance(value, str) else None
        raise ValueError(f"The trigger_rule must be one of {[r.value for r in TriggerRule]},"
                         f"'{dag_id or ''}.{task_id}'; received '{value}'." + (f" ({hint})" if hint else ""))
    return TriggerRule(value)


_REMOVED_TRIGGER_RULES = {
    "dummy": "renamed to 'always' in Airflow 2.2 and removed in Airflow 3",
    "none_failed_or_skipped": "renamed to 'none_failed_min_one_success' in Airflow 2.2 and removed in Airflow 3",
}


def validate_weight_rule(rule: Any, task_id: str) -> WeightRule | PriorityWeightStrategy:
    """A built-in rule as its ``WeightRule``; a custom strategy (instance or registered class path) as an instance."""
    return load_weight_rule(rule, task_id)


def validate_priority_weight(weight: Any, task_id: str) -> int:
    """An int, clamped (not refused) to the 32-bit range, as Airflow's ``db_safe_priority`` does."""
    if not isinstance(weight, int):
        raise TypeError(f"'priority_weight' for task '{task_id}' expects {int}, got {type(weight)} with value "
                        f"{weight!r}")
    return max(MINIMUM_PRIORITY_WEIGHT, min(MAXIMUM_PRIORITY_WEIGHT, int(weight)))


def _assign(node: Any, fields: dict[str, Any]) -> None:
    """Set ``fields`` on a new operator as ``setattr`` one by one would, in one update of its ``__dict__`` where
    that is the same thing: construction is hot at parse time (every try's child imports its DAG file again), and
    ``BaseOperator.__setattr__`` is Python. A class that intercepts assignment (its own ``__setattr__``, or a data
    descriptor such as a property for one of the names) gets each name through ``setattr``."""
    cls = type(node)
    if cls.__setattr__ is BaseOperator.__setattr__ and _data_descriptors(cls).isdisjoint(fields):
        node.__dict__.update(fields)
    else:
        for name, value in fields.items():
            setattr(node, name, value)


def _data_descriptors(cls: type) -> frozenset[str]:
    """The names ``cls`` and its bases bind to data descriptors (what ``setattr`` calls instead of storing); known
    per class once (``class_facts``)."""
    return known_per_class(cls, "_updraft_data_descriptors", _find_data_descriptors)


def _find_data_descriptors(cls: type) -> frozenset[str]:
    return frozenset(name for klass in cls.__mro__ for name, value in vars(klass).items()
                     if hasattr(type(value), "__set__") or hasattr(type(value), "__delete__"))


class _PartialDescriptor:
    """``Operator.partial(...)`` starts a mapped task; ``task.partial(...)`` on an instance is a mistake (Airflow)."""

    def __get__(self, obj: Any, cls: type[BaseOperator]) -> Any:
        if obj is not None:
            def partial(**kwargs: Any) -> Any:
                raise TypeError("partial can only be called on Operator classes, not Tasks themselves")

            return partial

        def partial_for_class(**kwargs: Any) -> OperatorPartial:
            # lazy: circle (sdk.mappedoperator imports this module)
            from updraft.sdk.mappedoperator import OperatorPartial

            return OperatorPartial(cls, kwargs)

        return partial_for_class


class BaseOperator(TaskNode, LoggingMixin, metaclass=BaseOperatorMeta):
    """Abstract base for operators; subclasses add their own arguments and (later) ``execute``."""

    # ``self.log`` is airflow.task.operators.<module>.<Class> (LoggingMixin), captured into the try's log.
    _log_config_logger_name = "airflow.task.operators"

    template_fields: ClassVar[tuple[str, ...]] = ()
    template_ext: tuple[str, ...] = ()
    template_fields_renderers: ClassVar[dict[str, str]] = {}
    # Airflow's: the try's rendered fields are recorded again as it ends (what ``execute`` set: ``@task.bash``'s
    # command, ``@task.sql``'s query), as its task runner's finalize overwrites them.
    overwrite_rtif_after_execution: ClassVar[bool] = False
    ui_color: ClassVar[str] = "#fff"
    ui_fgcolor: ClassVar[str] = "#000"
    # Instance attributes, beyond the common ones, that the scheduler or API must see in the serialized DAG.
    extra_serialized_fields: ClassVar[tuple[str, ...]] = ()
    # Airflow's: links to what the task drove (BaseOperatorLink instances), per class, property or instance;
    # persisted as XComs once a try ends (sdk.operator_link).
    operator_extra_links: Collection[Any] = ()
    # Operators that do nothing (EmptyOperator) finish in the scheduler without a worker, as in Airflow.
    inherits_from_empty_operator: ClassVar[bool] = False
    # Operators that may skip their downstream tasks (branching, short-circuit), as Airflow's SkipMixin marks.
    _can_skip_downstream: ClassVar[bool] = False
    _is_sensor: ClassVar[bool] = False
    is_mapped: ClassVar[bool] = False
    _detached: bool = False

    # What ``__init__`` sets on every instance (declared only: ``_assign`` stores them).
    owner: str
    email: str | Iterable[str] | None
    email_on_retry: bool
    email_on_failure: bool
    retries: int
    retry_delay: timedelta | None
    retry_exponential_backoff: bool | float
    max_retry_delay: timedelta | None
    depends_on_past: bool
    ignore_first_depends_on_past: bool
    wait_for_past_depends_before_skipping: bool
    wait_for_downstream: bool
    default_args: dict[str, Any]
    queue: str
    pool: str
    pool_slots: int
    execution_timeout: timedelta | None
    on_execute_callback: Any
    on_failure_callback: Any
    on_success_callback: Any
    on_retry_callback: Any
    on_skipped_callback: Any
    _pre_execute_hook: Any
    _post_execute_hook: Any
    resources: dict | None
    run_as_user: str | None
    map_index_template: str | None
    max_active_tis_per_dag: int | None
    max_active_tis_per_dagrun: int | None
    executor: str | None
    executor_config: dict[str, Any]
    do_xcom_push: bool
    multiple_outputs: bool
    inlets: list[Any]
    outlets: list[Any]
    doc: str | None
    doc_md: str | None
    doc_json: str | None
    doc_yaml: str | None
    doc_rst: str | None
    logger_name: str | None
    allow_nested_operators: bool
    render_template_as_native_obj: bool | None
    retry_policy: Any

    def __init__(
        self,
        *,
        task_id: str,
        owner: str = DEFAULT_OWNER,
        email: str | Iterable[str] | None = None,
        email_on_retry: bool = True,
        email_on_failure: bool = True,
        retries: int | None = DEFAULT_RETRIES,
        retry_delay: timedelta | float = DEFAULT_RETRY_DELAY,
        retry_exponential_backoff: bool | float = False,
        max_retry_delay: timedelta | float | None = None,
        start_date: datetime | None = None,
        end_date: datetime | None = None,
        depends_on_past: bool = False,
        ignore_first_depends_on_past: bool = False,
        wait_for_past_depends_before_skipping: bool = False,
        wait_for_downstream: bool = False,
        dag: DAG | None = None,
        params: dict | None = None,
        default_args: dict | None = None,
        priority_weight: int = DEFAULT_PRIORITY_WEIGHT,
        weight_rule: str | WeightRule | PriorityWeightStrategy = DEFAULT_WEIGHT_RULE,
        queue: str = DEFAULT_QUEUE,
        pool: str | None = None,
        pool_slots: int = DEFAULT_POOL_SLOTS,
        sla: timedelta | None = None,
        execution_timeout: timedelta | None = DEFAULT_TASK_EXECUTION_TIMEOUT,
        on_execute_callback: Any = None,
        on_failure_callback: Any = None,
        on_success_callback: Any = None,
        on_retry_callback: Any = None,
        on_skipped_callback: Any = None,
        pre_execute: Any = None,
        post_execute: Any = None,
        trigger_rule: str | TriggerRule = TriggerRule.ALL_SUCCESS,
        resources: dict | None = None,
        run_as_user: str | None = None,
        map_index_template: str | None = None,
        max_active_tis_per_dag: int | None = None,
        max_active_tis_per_dagrun: int | None = None,
        executor: str | None = None,
        executor_config: dict | None = None,
        do_xcom_push: bool = True,
        multiple_outputs: bool = False,
        inlets: Any = None,
        outlets: Any = None,
        task_group: TaskGroup | None = None,
        doc: str | None = None,
        doc_md: str | None = None,
        doc_json: str | None = None,
        doc_yaml: str | None = None,
        doc_rst: str | None = None,
        task_display_name: str | None = None,
        logger_name: str | None = None,
        allow_nested_operators: bool = True,
        render_template_as_native_obj: bool | None = None,
        retry_policy: Any = None,
        **kwargs: Any,
    ) -> None:
        if kwargs:
            hints = [f"{k} ({_REMOVED_ARGS[k]})" for k in kwargs if k in _REMOVED_ARGS]
            raise InvalidOperatorArguments(
                f"Invalid arguments were passed to {type(self).__name__} (task_id: {task_id}). "
                f"Invalid arguments were:\n**kwargs: {kwargs}" + (f"\n{'; '.join(hints)}" if hints else "")
            )
        refuse_unsupported("BaseOperator", {"run_as_user": run_as_user, "resources": resources,
                                            "logger_name": logger_name,
                                            "allow_nested_operators": allow_nested_operators})
        if sla is not None:
            # Airflow 3 still accepts the argument and ignores it with this warning; so do we.
            warnings.warn("The SLA feature is removed in Airflow 3.0, replaced with Deadline Alerts in >=3.1",
                          stacklevel=3)
        validate_key(task_id, kind="task_id")
        full_id = task_group.child_id(task_id) if task_group is not None else task_id
        validate_key(full_id, kind="task_id")
        dag_id = dag.dag_id if dag is not None else None

        # The arguments that can be refused are checked first, then all are set at once (``_assign``).
        retries = parse_retries(retries, task_id)
        delay = _as_timedelta(retry_delay, "retry_delay", task_id)
        max_retry_delay = _as_timedelta(max_retry_delay, "max_retry_delay", task_id)
        priority_weight = validate_priority_weight(priority_weight, task_id)
        weight_rule = validate_weight_rule(weight_rule, task_id)
        if not isinstance(pool_slots, int):
            raise TypeError(f"'pool_slots' for task {task_id!r} expects {int}, got {type(pool_slots)} with value "
                            f"{pool_slots!r}")
        if pool_slots < 1:
            raise ValueError(f"pool slots for {task_id}{f' in dag {dag_id}' if dag_id else ''} "
                             f"cannot be less than 1")
        if execution_timeout is not None and not isinstance(execution_timeout, timedelta):
            raise ValueError(f"execution_timeout must be timedelta object but passed as type: "
                             f"{type(execution_timeout)}")
        trigger_rule = validate_trigger_rule(trigger_rule, task_id, dag_id)
        executor_config = dict(executor_config or {})
        compute = resolve_compute(executor, executor_config, execution_timeout, task_id=full_id)
        retry_policy = _checked_retry_policy(retry_policy, task_id)
        _assign(self, {
            **self._new_relatives(),
            "_dag": None,
            "task_group": None,  # ``task_group.add`` below places it
            "_raw_task_id": task_id,
            "task_id": full_id,
            "owner": owner,
            "email": email,
            "email_on_retry": email_on_retry,
            "email_on_failure": email_on_failure,
            "retries": retries,
            "retry_delay": delay,
            "retry_exponential_backoff": retry_exponential_backoff,
            "max_retry_delay": max_retry_delay,
            "start_date": timezone.convert_to_utc(start_date),
            "end_date": timezone.convert_to_utc(end_date),
            "depends_on_past": True if wait_for_downstream else depends_on_past,
            "ignore_first_depends_on_past": ignore_first_depends_on_past,
            "wait_for_past_depends_before_skipping": wait_for_past_depends_before_skipping,
            "wait_for_downstream": wait_for_downstream,
            "params": params if isinstance(params, ParamsDict) else ParamsDict(params),
            "default_args": dict(default_args or {}),
            "priority_weight": priority_weight,
            "weight_rule": weight_rule,
            "queue": queue,
            "pool": DEFAULT_POOL_NAME if pool is None else pool,
            "pool_slots": pool_slots,
            "execution_timeout": execution_timeout,
            "on_execute_callback": on_execute_callback,
            "on_failure_callback": on_failure_callback,
            "on_success_callback": on_success_callback,
            "on_retry_callback": on_retry_callback,
            "on_skipped_callback": on_skipped_callback,
            "_pre_execute_hook": pre_execute,
            "_post_execute_hook": post_execute,
            "trigger_rule": trigger_rule,
            "resources": resources,
            "run_as_user": run_as_user,
            "map_index_template": map_index_template,
            "max_active_tis_per_dag": max_active_tis_per_dag,
            "max_active_tis_per_dagrun": max_active_tis_per_dagrun,
            "executor": executor,
            "executor_config": executor_config,
            "compute": compute,
            "do_xcom_push": do_xcom_push,
            "multiple_outputs": multiple_outputs,
            "inlets": list(inlets) if isinstance(inlets, (list, tuple)) else ([inlets] if inlets else []),
            "outlets": list(outlets) if isinstance(outlets, (list, tuple)) else ([outlets] if outlets else []),
            "doc": doc,
            "doc_md": doc_md,
            "doc_json": doc_json,
            "doc_yaml": doc_yaml,
            "doc_rst": doc_rst,
            "_task_display_name": task_display_name,
            "logger_name": logger_name,
            "allow_nested_operators": allow_nested_operators,
            "render_template_as_native_obj": render_template_as_native_obj,
            "retry_policy": retry_policy,
        })
        _check_instance_types(self)
        if task_group is not None:
            task_group.add(self)
        if dag is not None:
            self.dag = dag

    def _finish_init(self) -> None:
        """Runs once, after the outermost ``__init__``: template fields may now hold XComArgs."""
        self._init_done = not self._detached
        if not self._detached:
            self._wire_xcom_args()
            if SetupTeardownContext.active:  # created inside `with setup >> teardown:`
                SetupTeardownContext.update_context_map(self)

    def _wire_xcom_args(self) -> None:
        for field in self.template_fields:
            value = getattr(self, field, None)
            if value is None or (type(value) in (list, dict, tuple, str) and not value):
                continue  # nothing to wire (the usual PythonOperator's empty arguments): no walk
            XComArg.apply_upstream_relationship(self, value)

    def __setattr__(self, key: str, value: Any) -> None:
        # Hot at parse time (every attribute of every task): test the cheap tuple membership first.
        object.__setattr__(self, key, value)
        if key in self.template_fields and self.__dict__.get("_init_done", False):
            XComArg.apply_upstream_relationship(self, value)

    @property
    def task_display_name(self) -> str:
        return self._task_display_name or self.task_id

    @property
    def operator_name(self) -> str:
        return type(self).__name__

    @property
    def output(self) -> XComArg:
        """The task's ``return_value`` XCom, for wiring classic operators into TaskFlow code."""
        return PlainXComArg(self)

    @property
    def python_callable_name(self) -> str | None:
        fn = getattr(self, "python_callable", None)
        return getattr(fn, "__qualname__", None) if fn is not None else None

    partial: Any = _PartialDescriptor()

    def execute(self, context: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement execute()")

    def render_template(self, content: Any, context: Any, jinja_env: Any = None,
                        seen_oids: set[int] | None = None) -> Any:
        """Airflow's ``Templater.render_template``: ``content`` (a string, a template file named by one of
        ``template_ext``, or collections of them) rendered with ``context`` by the DAG's Jinja environment, as this
        task's template fields are. Only where a try runs (the runtime renders; the SDK never imports it)."""
        if jinja_env is not None:
            raise UnsupportedFeatureError("render_template(jinja_env=...)", "templates render with the DAG's own "
                                          "Jinja environment (template_searchpath, user_defined_macros/filters)")
        # lazy: the task child only (rendering runs where a try runs; DAG parsing never imports sdk.execution)
        from updraft.sdk.execution import render_value

        return render_value(self, content, context)

    def render_template_fields(self, context: Any, jinja_env: Any = None) -> None:
        """Render this task's template fields in place with ``context`` (Airflow's method; a provider's decorated
        operator calls it again once its callable set a field). Only where a try runs."""
        if jinja_env is not None:
            raise UnsupportedFeatureError("render_template_fields(jinja_env=...)", "templates render with the DAG's "
                                          "own Jinja environment (template_searchpath, user_defined_macros/filters)")
        # lazy: the task child only (rendering runs where a try runs; DAG parsing never imports sdk.execution)
        from updraft.sdk.execution import render_template_fields

        render_template_fields(self, context)

    def defer(self, *, trigger: Any, method_name: str | None, kwargs: dict[str, Any] | None = None,
              timeout: timedelta | float | None = None) -> NoReturn:
        """Suspend this try until ``trigger`` fires, then resume it in ``method_name(context, event=...,
        **kwargs)`` (Airflow's ``defer``). The wait holds no worker: it runs on Step Functions."""
        raise TaskDeferred(trigger=trigger, method_name=method_name, kwargs=kwargs, timeout=timeout)

    def resume_execution(self, next_method: str, next_kwargs: dict[str, Any] | None, context: Any) -> Any:
        """What a resumed try runs instead of ``execute`` (Airflow's entry point, and its ``__fail__`` signal
        for a deferral that timed out or whose trigger failed)."""
        # lazy: the task child only (a resumed deferral; the model layer stays out of DAG parsing)
        from updraft.model.deferrals import TRIGGER_FAIL_REPR, TRIGGER_TIMEOUT

        next_kwargs = next_kwargs or {}
        if next_method == TRIGGER_FAIL_REPR:
            error = next_kwargs.get("error", "Unknown")
            if error == TRIGGER_TIMEOUT:
                raise TaskDeferralTimeout(error)
            raise TaskDeferralError(error)
        return getattr(self, next_method)(context, **next_kwargs)


def chain(*tasks: Any) -> None:
    """Airflow's ``chain``: consecutive arguments depend on each other; two lists must have the same length."""
    for up, down in itertools.pairwise(tasks):
        if isinstance(up, DependencyMixin):
            up.set_downstream(down)
            continue
        if isinstance(down, DependencyMixin):
            down.set_upstream(up)
            continue
        if not isinstance(up, (list, tuple)) or not isinstance(down, (list, tuple)):
            raise TypeError(f"Chain not supported between instances of {type(up).__name__} and "
                            f"{type(down).__name__}")
        if len(up) != len(down):
            raise ValueError(f"Chain not supported for different length Iterable. Got {len(up)} and {len(down)}.")
        for u, d in zip(up, down, strict=True):
            u.set_downstream(d)


def chain_linear(*elements: Any) -> None:
    """Every element of each argument depends on every element of the previous argument."""
    # lazy: parse cost (edges only for chain_linear; a DAG file with neither Label nor chain_linear skips it)
    from updraft.sdk.edges import EdgeModifier

    if not elements:
        raise ValueError("No tasks provided; nothing to do.")
    prev = None
    deps_set = False
    for current in elements:
        if isinstance(current, EdgeModifier):
            raise ValueError("Labels are not supported by chain_linear")
        current_list = [current] if isinstance(current, DependencyMixin) else list(current)
        if prev is not None:
            for up in prev:
                up.set_downstream(current_list)
                deps_set = True
        prev = current_list
    if not deps_set:
        raise ValueError("No dependencies were set. Did you forget to expand with `*`?")


def cross_downstream(from_tasks: Any, to_tasks: Any) -> None:
    """Every task of ``from_tasks`` is upstream of every task of ``to_tasks``."""
    for task in from_tasks:
        task.set_downstream(to_tasks)
