"""The DAG: a set of tasks, their edges, a schedule, and the limits and defaults that apply to its runs.

Validation mirrors Airflow 3 so that a file that parses here parses there and vice versa; the checks that need
the whole graph (cycles, schedulable params) live in ``validate()``, which the parser calls per DAG.
"""

from __future__ import annotations

import heapq
import os
import sys
import warnings
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from types import FrameType
from typing import TYPE_CHECKING, Any

from updraft import airflow_config
from updraft.model.identifiers import validate_key
from updraft.sdk import timezone
from updraft.sdk._internal import dag_registry
from updraft.sdk._internal.argument_support import refuse_unsupported
from updraft.sdk._internal.contexts import DagContext
from updraft.sdk.exceptions import (
    AirflowDagCycleException,
    AirflowException,
    DuplicateTaskIdFound,
    FailFastDagInvalidTriggerRule,
    ParamValidationError,
    TaskNotFound,
)
from updraft.sdk.param import NOTSET, ParamsDict
from updraft.sdk.setup_teardown import validate_setup_teardown
from updraft.sdk.trigger_rule import TriggerRule, WeightRule

if TYPE_CHECKING:
    from updraft.sdk.node import TaskNode
    from updraft.sdk.taskgroup import TaskGroup
    from updraft.timetables.base import Timetable

DEFAULT_MAX_ACTIVE_TASKS = 16  # [core] max_active_tasks_per_dag
DEFAULT_MAX_ACTIVE_RUNS = 16  # [core] max_active_runs_per_dag


TAG_MAX_LEN = 100

_REMOVED_DAG_ARGS = {
    "schedule_interval": "removed in Airflow 3; use schedule=",
    "timetable": "removed in Airflow 3; pass the timetable as schedule=",
    "concurrency": "removed in Airflow 3; use max_active_tasks=",
    "default_view": "removed in Airflow 3",
    "orientation": "removed in Airflow 3",
    "full_filepath": "removed in Airflow 3",
}

_SDK_DIRS = tuple(
    p for p in (
        __file__.rsplit("/sdk/", 1)[0] + "/",  # shared/updraft/
        __file__.rsplit("/updraft/", 1)[0] + "/airflow/",  # shared/airflow/
    )
)


def _convert_doc_md(doc_md: str | None) -> str | None:
    """Airflow 3's converter: a ``doc_md`` ending in ``.md`` is a path whose contents become the doc (the path
    itself stays when no such file exists)."""
    if doc_md is None or not doc_md.endswith(".md"):
        return doc_md
    try:
        with open(doc_md) as fh:
            return fh.read()
    except FileNotFoundError:
        return doc_md


def _caller_file() -> str:
    """The DAG file that is creating this DAG: the first frame outside Updraft's own packages."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_SDK_DIRS):
        frame = frame.f_back
    return frame.f_code.co_filename if frame is not None else "<unknown>"


class _TemplateFileReader:
    """Reads template files the way the DAG's Jinja ``FileSystemLoader`` finds them (jinja2 loaded on first use)."""

    def __init__(self, searchpath: list[str]) -> None:
        import jinja2

        self._loader = jinja2.FileSystemLoader(searchpath)
        self._env = jinja2.Environment(loader=self._loader)

    def read(self, name: str) -> str | None:
        try:
            return self._loader.get_source(self._env, name)[0]
        except Exception:
            return None


class DAG:
    """A workflow, declared as in Airflow 3 (``with DAG(...)``, ``@dag`` or plain construction)."""

    # The run limits, set by name in ``__init__`` from the argument or the configured default.
    max_active_tasks: int
    max_active_runs: int
    max_consecutive_failed_dag_runs: int

    @property
    def doc_md(self) -> str | None:
        return self._doc_md

    @doc_md.setter
    def doc_md(self, value: str | None) -> None:
        # Converted on assignment too (``dag.doc_md = "README.md"``), as Airflow's attrs converter is.
        self._doc_md = _convert_doc_md(value)

    def __init__(
        self,
        dag_id: str,
        description: str | None = None,
        schedule: Any = None,
        start_date: datetime | None = None,
        end_date: datetime | None = None,
        template_searchpath: str | Iterable[str] | None = None,
        template_undefined: type | None = None,
        user_defined_macros: dict | None = None,
        user_defined_filters: dict | None = None,
        default_args: dict | None = None,
        max_active_tasks: int | None = None,
        max_active_runs: int | None = None,
        max_consecutive_failed_dag_runs: int | None = None,
        dagrun_timeout: timedelta | None = None,
        catchup: bool | None = None,
        on_success_callback: Callable | list[Callable] | None = None,
        on_failure_callback: Callable | list[Callable] | None = None,
        doc_md: str | None = None,
        params: dict | None = None,
        access_control: dict | None = None,
        is_paused_upon_creation: bool | None = None,
        jinja_environment_kwargs: dict | None = None,
        render_template_as_native_obj: bool = False,
        tags: Iterable[str] | None = None,
        owner_links: dict[str, str] | None = None,
        auto_register: bool = True,
        fail_fast: bool = False,
        dag_display_name: str | None = None,
        disable_bundle_versioning: bool = False,
        deadline: Any = None,
        sla_miss_callback: Any = None,
        allowed_run_types: Any = None,
        rerun_with_latest_version: bool | None = None,
        task_group: Any = None,
        **kwargs: Any,
    ) -> None:
        if kwargs:
            name = next(iter(kwargs))
            hint = _REMOVED_DAG_ARGS.get(name)
            raise TypeError(f"DAG.__init__() got an unexpected keyword argument '{name}'"
                            + (f" ({hint})" if hint else ""))
        refuse_unsupported("DAG", {"deadline": deadline, "allowed_run_types": allowed_run_types,
                                   "rerun_with_latest_version": rerun_with_latest_version, "task_group": task_group})
        if sla_miss_callback is not None:
            # Airflow 3 accepts and ignores it with this warning; refusing would break files Airflow 3 parses.
            warnings.warn("The SLA feature is removed in Airflow 3.0, and replaced with a Deadline Alerts in >=3.1",
                          stacklevel=2)
        self.dag_id = validate_key(dag_id, kind="dag_id")
        self.fileloc = _caller_file()
        if description is not None and not isinstance(description, str):
            raise TypeError(f"'description' must be <class 'str'> (got {description!r} that is a "
                            f"{type(description)}).")
        self.description = description
        if default_args is not None and not isinstance(default_args, dict):
            raise TypeError(f"'default_args' must be <class 'dict'> (got {default_args!r} that is a "
                            f"{type(default_args)}).")
        self.default_args = dict(default_args or {})
        # Airflow: the DAG's timezone is its start date's (a string one parsed as UTC unless it names an
        # offset); strings in default_args are then parsed in that timezone, while naive datetimes are UTC;
        # every date is stored in UTC while the DAG keeps its start date's timezone for schedules.
        zone_source = start_date if start_date is not None else self.default_args.get("start_date")
        zone = self._pick_timezone(timezone.parse(zone_source) if isinstance(zone_source, str) else zone_source)
        for key in ("start_date", "end_date"):
            if isinstance(self.default_args.get(key), str):
                self.default_args[key] = timezone.parse(self.default_args[key], timezone=zone)
        if start_date is None:
            start_date = self.default_args.get("start_date") or None
        if end_date is None:
            # Airflow leaves DAG.end_date unset here but ends every task there, and its scheduler stops at the
            # latest task end_date: the same bound, kept on the DAG so the scheduler reads one field.
            end_date = self.default_args.get("end_date") or None
        self.timezone = self._pick_timezone(start_date)
        self.start_date = timezone.convert_to_utc(start_date)
        self.end_date = timezone.convert_to_utc(end_date)
        for key in ("start_date", "end_date"):
            if self.default_args.get(key):
                self.default_args[key] = timezone.convert_to_utc(self.default_args[key])
        self.template_searchpath = (
            [template_searchpath] if isinstance(template_searchpath, str) else list(template_searchpath or [])
        )
        self.template_undefined = template_undefined
        self.user_defined_macros = user_defined_macros
        self.user_defined_filters = user_defined_filters
        limits = {
            "max_active_tasks": (max_active_tasks,
                                 airflow_config.get_int("core", "max_active_tasks_per_dag", DEFAULT_MAX_ACTIVE_TASKS)),
            "max_active_runs": (max_active_runs,
                                airflow_config.get_int("core", "max_active_runs_per_dag", DEFAULT_MAX_ACTIVE_RUNS)),
            "max_consecutive_failed_dag_runs": (
                max_consecutive_failed_dag_runs,
                airflow_config.get_int("core", "max_consecutive_failed_dag_runs_per_dag", 0)),
        }
        for name, (given, default) in limits.items():
            value = default if given is None else given  # Airflow: None means "the configured default"
            if not isinstance(value, int):
                raise TypeError(f"'{name}' must be <class 'int'> (got {value!r} that is a {type(value)}).")
            if value < 0:
                # Stricter than Airflow, which accepts a negative limit and then never runs anything.
                raise ValueError(f"DAG '{dag_id}': {name} must not be negative, got {value!r}")
            setattr(self, name, value)
        if dagrun_timeout is not None and not isinstance(dagrun_timeout, timedelta):
            raise TypeError("Dag dagrun_timeout must be timedelta or None")
        self.dagrun_timeout = dagrun_timeout
        self.catchup = airflow_config.get_bool("scheduler", "catchup_by_default") if catchup is None else bool(catchup)
        self.on_success_callback = on_success_callback
        self.on_failure_callback = on_failure_callback
        self.doc_md = doc_md
        # Airflow merges default_args["params"] over params (plain update, no validation) and drops the key.
        raw_params = dict(params.params() if isinstance(params, ParamsDict) else (params or {}))
        if "params" in self.default_args:
            raw_params.update(self.default_args.pop("params") or {})
        self.params = ParamsDict(raw_params)
        self.access_control = access_control
        self.is_paused_upon_creation = is_paused_upon_creation
        self.jinja_environment_kwargs = jinja_environment_kwargs
        self.render_template_as_native_obj = render_template_as_native_obj
        self.tags = self._validate_tags(tags)
        self.owner_links = self._validate_owner_links(owner_links or {})
        self.auto_register = auto_register
        self.fail_fast = fail_fast
        self.dag_display_name = dag_display_name or dag_id
        self.disable_bundle_versioning = disable_bundle_versioning
        self.schedule = schedule
        self.timetable = self._make_timetable(schedule)
        self.edge_info: dict[str, dict[str, dict[str, str]]] = {}
        self.task_dict: dict[str, TaskNode] = {}
        self.validate_schedule_and_params()
        if self.catchup and self.timetable.can_be_scheduled and self.start_date is None:
            raise ValueError("start_date is required when catchup=True")
        limit = getattr(self.timetable, "active_runs_limit", None)
        if limit is not None and limit < self.max_active_runs:
            raise ValueError(f"Invalid max_active_runs: {type(self.timetable).__name__} requires "
                             f"max_active_runs <= {limit}")

        # lazy: import cost (`from airflow.sdk import DAG` loads no task-group module until DAG() builds one)
        from updraft.sdk.taskgroup import TaskGroup

        self.task_group: TaskGroup = TaskGroup.create_root(self)

    # -- construction helpers ---------------------------------------------------------------------------------
    def _pick_timezone(self, start_date: datetime | None):
        if isinstance(start_date, datetime) and not timezone.is_naive(start_date):
            return timezone.to_aware(start_date).timezone
        return timezone.TIMEZONE

    def _make_timetable(self, schedule: Any) -> Timetable:
        # lazy: import cost (`from airflow.sdk import DAG` stays without croniter; DAG() builds the timetable)
        from updraft.timetables.schedule import create_timetable

        return create_timetable(schedule, self.timezone)

    @staticmethod
    def _validate_tags(tags: Iterable[str] | None) -> set[str]:
        if tags is None:
            return set()
        if isinstance(tags, str):
            raise TypeError("DAG tags must be a collection of strings, not a single string")
        out = set()
        for tag in tags:
            if not isinstance(tag, str):
                raise TypeError(f"DAG tags must be strings, got {type(tag).__name__}: {tag!r}")
            if len(tag) > TAG_MAX_LEN:
                raise ValueError(f"tag cannot be longer than {TAG_MAX_LEN} characters")
            out.add(tag)
        return out

    @staticmethod
    def _validate_owner_links(links: dict[str, str]) -> dict[str, str]:
        from urllib.parse import urlsplit

        bad = {}
        for owner, link in links.items():
            parts = urlsplit(link)
            if parts.scheme == "mailto":
                if not parts.path:
                    bad[owner] = link
            elif parts.scheme not in ("http", "https") or not parts.netloc:
                bad[owner] = link
        if bad:
            raise ValueError(f"Wrong link format was used for the owner. Use a valid link \n"
                             f"Bad formatted links are: {bad}")
        return dict(links)

    # -- context manager and registration ---------------------------------------------------------------------
    def __enter__(self) -> DAG:
        DagContext.push(self)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        DagContext.pop()
        if exc_type is None:
            dag_registry.register(self)

    # -- tasks ------------------------------------------------------------------------------------------------
    def add_task(self, task: TaskNode) -> None:
        existing = self.task_dict.get(task.task_id)
        if existing is task:
            return
        if existing is not None:
            raise DuplicateTaskIdFound(f"Task id '{task.task_id}' has already been added to the DAG")
        if task.task_id in self.task_group.used_group_ids:
            raise DuplicateTaskIdFound(f"Task id '{task.task_id}' has already been added to the DAG "
                                       "as a task group id")
        start = getattr(task, "start_date", None)
        if self.start_date is not None and (start is None or start < self.start_date):
            # A task never starts before its DAG (Airflow takes the later of the two).
            task.start_date = self.start_date
        end = getattr(task, "end_date", None)
        if self.end_date is not None and (end is None or end > self.end_date):
            task.end_date = self.end_date
        if self.fail_fast and task.trigger_rule not in (TriggerRule.ALL_SUCCESS, TriggerRule.ALL_DONE_SETUP_SUCCESS):
            raise FailFastDagInvalidTriggerRule()
        self.task_dict[task.task_id] = task
        if task._dag is None:
            task._dag = self
        if task.task_group is None:
            self.task_group.add(task)

    def add_tasks(self, tasks: Iterable[TaskNode]) -> None:
        for task in tasks:
            self.add_task(task)

    @property
    def tasks(self) -> list[TaskNode]:
        return list(self.task_dict.values())

    @property
    def task_ids(self) -> list[str]:
        return list(self.task_dict)

    def get_task(self, task_id: str) -> TaskNode:
        try:
            return self.task_dict[task_id]
        except KeyError:
            raise TaskNotFound(f"Task {task_id} not found") from None

    def has_task(self, task_id: str) -> bool:
        return task_id in self.task_dict

    @property
    def task_group_dict(self) -> dict[str, TaskGroup]:
        return {k: v for k, v in self.task_group.get_task_group_dict().items() if k is not None}

    def has_task_group(self, task_group_id: str) -> bool:
        return task_group_id in self.task_group_dict

    def set_dependency(self, upstream_task_id: str, downstream_task_id: str) -> None:
        self.get_task(upstream_task_id).set_downstream(self.get_task(downstream_task_id))

    def param(self, name: str, default: Any = NOTSET) -> Any:
        """A reference to a DAG param for use as an operator argument, resolved when the task runs."""
        # lazy: circle (sdk.decorators imports this module)
        from updraft.sdk.decorators.dag import DagParam

        return DagParam(self, name, default)

    @property
    def task(self) -> Any:
        """``@the_dag.task``: a TaskFlow decorator that puts its tasks in this DAG."""
        import functools

        # lazy: circle (sdk.decorators imports this module)
        from updraft.sdk.decorators import task

        return functools.partial(task, dag=self)

    @property
    def roots(self) -> list[TaskNode]:
        return [t for t in self.tasks if not t.upstream_task_ids]

    @property
    def leaves(self) -> list[TaskNode]:
        return [t for t in self.tasks if not t.downstream_task_ids]

    @property
    def owner(self) -> str:
        return ", ".join(sorted({getattr(t, "owner", "airflow") for t in self.tasks})) or "airflow"

    @property
    def folder(self) -> str:

        return os.path.dirname(self.fileloc)

    def resolve_template_files(self) -> None:
        """Airflow's parse-time step: a template field naming a file with one of its task's ``template_ext``
        (``bash_command="run.sh"``) holds that file's contents, found in the DAG file's folder then
        ``template_searchpath``; a file that cannot be read leaves the name (Airflow logs it and goes on).
        Mapped tasks are left alone, as their fields are only known per map index."""
        loader: _TemplateFileReader | None = None

        def resolved(value: Any, exts: tuple[str, ...]) -> Any:
            nonlocal loader
            if not (isinstance(value, str) and value.endswith(exts)):
                return value
            loader = loader or _TemplateFileReader([self.folder, *self.template_searchpath])
            text = loader.read(value)
            return value if text is None else text

        for task in self.tasks:
            exts = tuple(getattr(task, "template_ext", None) or ())
            if not exts or task.is_mapped:
                continue
            for field in task.template_fields:
                content = getattr(task, field, None)
                if isinstance(content, list):
                    content[:] = [resolved(item, exts) for item in content]
                elif (text := resolved(content, exts)) is not content:
                    setattr(task, field, text)

    # -- edges ------------------------------------------------------------------------------------------------
    def set_edge_info(self, upstream_task_id: str, downstream_task_id: str, info: dict[str, str]) -> None:
        self.edge_info.setdefault(upstream_task_id, {})[downstream_task_id] = dict(info)

    def get_edge_info(self, upstream_task_id: str, downstream_task_id: str) -> dict[str, str]:
        return self.edge_info.get(upstream_task_id, {}).get(downstream_task_id, {})

    # -- graph checks -----------------------------------------------------------------------------------------
    def topological_sort(self) -> list[TaskNode]:
        """Tasks in dependency order, ties broken by task_id so the order is deterministic."""
        indegree = {tid: len(t.upstream_task_ids) for tid, t in self.task_dict.items()}
        ready = [tid for tid, n in indegree.items() if n == 0]
        heapq.heapify(ready)
        order: list[TaskNode] = []
        while ready:
            tid = heapq.heappop(ready)
            order.append(self.task_dict[tid])
            for down in self.task_dict[tid].downstream_task_ids:
                indegree[down] -= 1
                if indegree[down] == 0:
                    heapq.heappush(ready, down)
        if len(order) != len(self.task_dict):
            self.check_cycle()
        return order

    def find_cycle(self) -> list[str] | None:
        """One cycle as a path of task_ids (first == last), or None; iterative so deep chains do not recurse."""
        white, grey, black = 0, 1, 2
        color = dict.fromkeys(self.task_dict, white)
        for start in sorted(self.task_dict):
            if color[start] != white:
                continue
            path = [start]
            stack = [iter(sorted(self.task_dict[start].downstream_task_ids))]
            color[start] = grey
            while stack:
                nxt = next(stack[-1], None)
                if nxt is None:
                    color[path.pop()] = black
                    stack.pop()
                    continue
                if color[nxt] == grey:
                    return [*path[path.index(nxt):], nxt]
                if color[nxt] == white:
                    color[nxt] = grey
                    path.append(nxt)
                    stack.append(iter(sorted(self.task_dict[nxt].downstream_task_ids)))
        return None

    def check_cycle(self) -> None:
        cycle = self.find_cycle()
        if cycle:
            shown = cycle if len(cycle) <= 21 else [*cycle[:10], f"... {len(cycle) - 20} more ...", *cycle[-10:]]
            raise AirflowDagCycleException(
                f"Cycle detected in DAG: {self.dag_id}. Faulty task: {cycle[0]}. Cycle: {' >> '.join(shown)}"
            )

    def validate(self) -> None:
        """Whole-DAG checks Airflow runs when it bags a DAG; the parser turns failures into import errors."""
        # The ids again: checked at construction, but a DAG file may assign one afterwards.
        validate_key(self.dag_id, kind="dag_id")
        for task in self.tasks:
            validate_key(task.task_id, kind="task_id")
        self.check_cycle()
        self.timetable.validate()
        if self.end_date is not None and self.start_date is not None and self.end_date < self.start_date:
            raise AirflowException(f"DAG '{self.dag_id}': end_date ({self.end_date}) is before start_date "
                                   f"({self.start_date})")
        self.validate_schedule_and_params()
        # lazy: import cost (`from airflow.sdk import DAG` loads no task-group module until DAG() builds one)
        from updraft.sdk.taskgroup import validate_nested_mapped_groups

        validate_setup_teardown(self.tasks)
        validate_nested_mapped_groups(self.tasks)
        for task in self.tasks:
            validate_task = getattr(task, "validate_for_dag", None)
            if validate_task is not None:
                validate_task()

    def validate_schedule_and_params(self) -> None:
        """A scheduled run has no one to type params in, so every param needs a valid default (Airflow).

        Checked at construction, as Airflow does, and again in ``validate()`` because ``@dag`` function
        arguments and later assignments add params after the constructor ran.
        """
        if not self.timetable.can_be_scheduled:
            return
        try:
            self.params.validate()
        except ParamValidationError as err:
            raise ValueError(
                f"Dag {self.dag_id!r} is not allowed to define a Schedule, as there are required params without "
                f"default values, or the default values are not valid. ({err})"
            ) from err

    # -- priorities -------------------------------------------------------------------------------------------
    def priority_weights(self) -> dict[str, int]:
        """Each task's effective priority, as Airflow's ``priority_weight_total`` computes it.

        Its own weight plus the weights of every task reachable downstream (or upstream), each counted once,
        clamped to 32 bits. Reachability is a bitset per task built in topological order, so a deep chain
        costs big-int ORs instead of the quadratic set unions a naive walk needs. A task with a custom
        ``PriorityWeightStrategy`` gets its strategy's weight for a new task instance (try number 0).
        """
        # lazy: import cost (`DAG` alone does not load the operator layer)
        from updraft.sdk.baseoperator import MAXIMUM_PRIORITY_WEIGHT, MINIMUM_PRIORITY_WEIGHT
        from updraft.sdk.priority_strategy import weights_by_try

        order = [t.task_id for t in self.topological_sort()]
        index = {tid: i for i, tid in enumerate(order)}
        rules = {tid: task.weight_rule for tid, task in self.task_dict.items()}
        weight_sum = _masked_sum([self.task_dict[tid].priority_weight for tid in order])
        reach: dict[WeightRule, dict[str, int]] = {}
        if WeightRule.DOWNSTREAM in rules.values():
            reach[WeightRule.DOWNSTREAM] = _reach(order[::-1], index,
                                                  lambda tid: self.task_dict[tid].downstream_task_ids)
        if WeightRule.UPSTREAM in rules.values():
            reach[WeightRule.UPSTREAM] = _reach(order, index, lambda tid: self.task_dict[tid].upstream_task_ids)
        weights = {}
        for tid, task in self.task_dict.items():
            total, rule = task.priority_weight, rules[tid]
            if not isinstance(rule, WeightRule):
                total = weights_by_try(task, rule)[0]
            elif rule != WeightRule.ABSOLUTE:
                total += weight_sum(reach[rule][tid])
            weights[tid] = max(MINIMUM_PRIORITY_WEIGHT, min(MAXIMUM_PRIORITY_WEIGHT, total))
        return weights

    def __repr__(self) -> str:
        return f"<DAG: {self.dag_id}>"


def _reach(order: list[str], index: dict[str, int], direct: Callable[[str], set[str]]) -> dict[str, int]:
    """Per task, the bitset (bit i = ``order[i]``) of tasks reachable through ``direct``; relatives come first."""
    out: dict[str, int] = {}
    for tid in order:
        mask = 0
        for rel in direct(tid):
            mask |= out[rel] | (1 << index[rel])
        out[tid] = mask
    return out


def _masked_sum(weights: list[int]) -> Callable[[int], int]:
    """Sum of ``weights[i]`` over the set bits of a mask; by popcount per distinct weight when there are few."""
    by_weight: dict[int, int] = {}
    for i, weight in enumerate(weights):
        by_weight[weight] = by_weight.get(weight, 0) | (1 << i)
    if len(by_weight) <= 32:
        groups = list(by_weight.items())
        return lambda mask: sum(weight * (mask & members).bit_count() for weight, members in groups)

    def bit_by_bit(mask: int) -> int:
        bits = bin(mask)[:1:-1]  # least significant first
        return sum(weights[i] for i, bit in enumerate(bits) if bit == "1")

    return bit_by_bit
