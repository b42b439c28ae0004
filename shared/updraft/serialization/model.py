"""SerializedDAG and SerializedTask: the versioned JSON contract between the parser and everything else.

The scheduler and API read these and never import DAG code. Each field carries its codec, so writing and
reading are one table and cannot drift apart; ``from_dict(d).to_dict() == d`` for every valid document.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import heapq
from typing import TYPE_CHECKING, Any

from updraft.serialization.codecs import DATETIME, DURATION, PARAMS, RAW, SORTED, TIMETABLE, VALUE, Codec, spec

if TYPE_CHECKING:
    from updraft.timetables.base import Timetable

SCHEMA_VERSION = 1


class SchemaVersionError(ValueError):
    """A document written by a newer (or unknown) schema: refuse it instead of misreading it."""


@functools.cache
def _codecs(cls: type) -> dict[str, Codec]:
    """Field name -> codec, computed once per class (``dataclasses.fields`` is slow on the parse hot path)."""
    return {f.name: f.metadata["codec"] for f in dataclasses.fields(cls) if f.metadata.get("codec")}


def _encode_fields(obj: object, *, drop_none: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # mypy checks a class's Hashable-ness against its instances' unbound __hash__; every class is hashable.
    for name, codec in _codecs(type(obj)).items():  # type: ignore[arg-type]
        value = getattr(obj, name)
        if drop_none and value is None:
            continue
        out[name] = value if codec is RAW else codec.encode(value)
    return out


def _decode_fields(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    known = _codecs(cls)
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise SchemaVersionError(f"{cls.__name__}: unknown fields {unknown} for schema version {SCHEMA_VERSION}")
    return {name: value if (codec := known[name]) is RAW else codec.decode(value) for name, value in data.items()}


@dataclasses.dataclass
class SerializedTask:
    """One task as the scheduler sees it: rules, limits, retries, placement, and mapping inputs."""

    task_id: str = spec(RAW)
    task_type: str = spec(RAW)
    operator_module: str = spec(RAW)
    custom_operator_name: str | None = spec(RAW)
    label: str = spec(RAW)
    task_display_name: str = spec(RAW)
    task_group_id: str | None = spec(RAW)
    upstream_task_ids: list[str] = spec(SORTED, factory=list)
    downstream_task_ids: list[str] = spec(SORTED, factory=list)
    trigger_rule: str = spec(RAW, "all_success")
    weight_rule: str = spec(RAW, "downstream")  # a WeightRule value, or a custom strategy's class path
    priority_weight: int = spec(RAW, 1)
    effective_priority_weight: int = spec(RAW, 1)
    # A custom PriorityWeightStrategy's weight per try number, evaluated at parse time (sdk.priority_strategy).
    weights_by_try: list[int] | None = spec(RAW)
    pool: str = spec(RAW, "default_pool")
    pool_slots: int = spec(RAW, 1)
    queue: str = spec(RAW, "default")
    retries: int = spec(RAW, 0)
    retry_delay: dt.timedelta | None = spec(DURATION)
    retry_exponential_backoff: bool | float = spec(RAW, False)
    max_retry_delay: dt.timedelta | None = spec(DURATION)
    execution_timeout: dt.timedelta | None = spec(DURATION)
    depends_on_past: bool = spec(RAW, False)
    ignore_first_depends_on_past: bool = spec(RAW, False)
    wait_for_past_depends_before_skipping: bool = spec(RAW, False)
    wait_for_downstream: bool = spec(RAW, False)
    start_date: dt.datetime | None = spec(DATETIME)
    end_date: dt.datetime | None = spec(DATETIME)
    owner: str = spec(RAW, "airflow")
    email: Any = spec(VALUE)
    email_on_retry: bool = spec(RAW, True)
    email_on_failure: bool = spec(RAW, True)
    max_active_tis_per_dag: int | None = spec(RAW)
    max_active_tis_per_dagrun: int | None = spec(RAW)
    do_xcom_push: bool = spec(RAW, True)
    multiple_outputs: bool = spec(RAW, False)
    compute: dict[str, Any] = spec(RAW, factory=dict)
    executor: str | None = spec(RAW)
    executor_config: Any = spec(VALUE)
    map_index_template: str | None = spec(RAW)
    doc: str | None = spec(RAW)
    doc_md: str | None = spec(RAW)
    doc_json: str | None = spec(RAW)
    doc_yaml: str | None = spec(RAW)
    doc_rst: str | None = spec(RAW)
    params: dict[str, Any] = spec(PARAMS, factory=dict)
    template_fields: list[str] = spec(RAW, factory=list)
    template_ext: list[str] = spec(RAW, factory=list)
    template_fields_renderers: dict[str, str] = spec(RAW, factory=dict)
    template_values: dict[str, Any] = spec(VALUE, factory=dict)
    python_callable_name: str | None = spec(RAW)
    is_mapped: bool = spec(RAW, False)  # a mapped task, or any task of a mapped task group
    map_group_id: str | None = spec(RAW)  # the mapped task group the task is in (its expand_input is the group's)
    expand_input: dict[str, Any] | None = spec(VALUE)
    partial_kwargs: dict[str, Any] | None = spec(VALUE)
    is_empty: bool = spec(RAW, False)
    can_skip_downstream: bool = spec(RAW, False)
    is_sensor: bool = spec(RAW, False)
    is_setup: bool = spec(RAW, False)
    is_teardown: bool = spec(RAW, False)
    on_failure_fail_dagrun: bool = spec(RAW, False)
    callbacks: list[str] = spec(RAW, factory=list)
    ui_color: str = spec(RAW, "#fff")
    ui_fgcolor: str = spec(RAW, "#000")
    inlets: list[Any] = spec(VALUE, factory=list)
    outlets: list[Any] = spec(VALUE, factory=list)
    extra: dict[str, Any] = spec(VALUE, factory=dict)
    # The task's operator extra links, name -> the XCom key its try stores the URL under (Airflow's
    # ``_operator_extra_links``, with the plugins' links resolved at parse time); None when it has none.
    extra_links: dict[str, str] | None = spec(RAW)

    def weight_at_try(self, try_number: int) -> int:
        """The priority weight Airflow gives the instance when it is (re)created at ``try_number``: a custom
        strategy's evaluated weight (the last evaluated try's beyond the table), else the effective weight."""
        if not self.weights_by_try:
            return self.effective_priority_weight
        return self.weights_by_try[min(try_number, len(self.weights_by_try) - 1)]

    def to_dict(self) -> dict[str, Any]:
        return _encode_fields(self, drop_none=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SerializedTask:
        return cls(**_decode_fields(cls, data))


@dataclasses.dataclass
class SerializedDAG:
    """A whole DAG: its schedule, limits, params, group tree and tasks, plus the file it came from."""

    dag_id: str = spec(RAW)
    relative_fileloc: str = spec(RAW)
    file_hash: str = spec(RAW)
    description: str | None = spec(RAW)
    dag_display_name: str = spec(RAW)
    timetable: Timetable = spec(TIMETABLE)
    timetable_summary: str = spec(RAW)
    timetable_description: str | None = spec(RAW)
    timezone: str = spec(RAW, "UTC")
    start_date: dt.datetime | None = spec(DATETIME)
    end_date: dt.datetime | None = spec(DATETIME)
    catchup: bool = spec(RAW, False)
    max_active_runs: int = spec(RAW, 16)
    max_active_tasks: int = spec(RAW, 16)
    max_consecutive_failed_dag_runs: int = spec(RAW, 0)
    dagrun_timeout: dt.timedelta | None = spec(DURATION)
    tags: list[str] = spec(SORTED, factory=list)
    owner: str = spec(RAW, "airflow")
    owner_links: dict[str, str] = spec(RAW, factory=dict)
    doc_md: str | None = spec(RAW)
    params: dict[str, Any] = spec(PARAMS, factory=dict)
    default_args: dict[str, Any] = spec(VALUE, factory=dict)
    is_paused_upon_creation: bool | None = spec(RAW)
    fail_fast: bool = spec(RAW, False)
    render_template_as_native_obj: bool = spec(RAW, False)
    template_searchpath: list[str] = spec(RAW, factory=list)
    access_control: Any = spec(VALUE)
    callbacks: list[str] = spec(RAW, factory=list)
    edge_info: dict[str, dict[str, dict[str, str]]] = spec(RAW, factory=dict)
    task_group: dict[str, Any] = spec(RAW, factory=dict)
    tasks: list[SerializedTask] = dataclasses.field(default_factory=list, metadata={"codec": None})

    @functools.cached_property
    def task_dict(self) -> dict[str, SerializedTask]:
        """Built once: the scheduler looks tasks up by id for every instance it evaluates or claims."""
        return {t.task_id: t for t in self.tasks}

    @functools.cached_property
    def topological_order(self) -> tuple[str, ...]:
        """Task ids, upstream before downstream, ties broken by task id (so every scheduler decides in one
        order). Built once: every evaluation of a run walks its tasks in this order."""
        pending = {tid: sum(1 for u in t.upstream_task_ids if u in self.task_dict)
                   for tid, t in self.task_dict.items()}
        ready = [tid for tid, n in pending.items() if n == 0]
        heapq.heapify(ready)
        order: list[str] = []
        while ready:
            tid = heapq.heappop(ready)
            order.append(tid)
            for down in self.task_dict[tid].downstream_task_ids:
                if down in pending:
                    pending[down] -= 1
                    if pending[down] == 0:
                        heapq.heappush(ready, down)
        if len(order) != len(pending):  # a cycle cannot come out of the parser; never loop on bad input
            order += sorted(set(pending) - set(order))
        return tuple(order)

    def to_dict(self) -> dict[str, Any]:
        """The versioned document: ``{"__version": N, "dag": {...}}`` with tasks sorted by task_id."""
        body = _encode_fields(self, drop_none=False)
        body["tasks"] = [t.to_dict() for t in sorted(self.tasks, key=lambda t: t.task_id)]
        return {"__version": SCHEMA_VERSION, "dag": body}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SerializedDAG:
        version = data.get("__version")
        if version != SCHEMA_VERSION:
            raise SchemaVersionError(f"serialized DAG has schema version {version!r}; this Updraft reads "
                                     f"version {SCHEMA_VERSION}")
        body = dict(data["dag"])
        tasks = [SerializedTask.from_dict(t) for t in body.pop("tasks", [])]
        return cls(**_decode_fields(cls, body), tasks=tasks)
