"""Build a SerializedDAG from a live DAG (inside the parser's child process, the only place user code runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from updraft.sdk.mappedoperator import MappedOperator
from updraft.sdk.operator_link import task_links
from updraft.sdk.param import ParamsDict
from updraft.sdk.priority_strategy import PriorityWeightStrategy, strategy_path, weights_by_try
from updraft.sdk.taskgroup import TaskGroup, mapped_groups_of
from updraft.sdk.timezone import timezone_name
from updraft.serialization.model import SerializedDAG, SerializedTask

if TYPE_CHECKING:
    from updraft.sdk.dag import DAG
    from updraft.sdk.node import TaskNode

_CALLBACKS = ("on_execute_callback", "on_failure_callback", "on_success_callback", "on_retry_callback",
              "on_skipped_callback")
# Copied verbatim from the task: same name on both sides.
_PLAIN_TASK_FIELDS = (
    "task_id", "label", "task_display_name", "trigger_rule", "weight_rule", "priority_weight", "pool",
    "pool_slots", "queue", "retries", "retry_delay", "retry_exponential_backoff", "max_retry_delay",
    "execution_timeout", "depends_on_past", "ignore_first_depends_on_past",
    "wait_for_past_depends_before_skipping", "wait_for_downstream", "start_date", "end_date", "owner", "email",
    "email_on_retry", "email_on_failure", "max_active_tis_per_dag", "max_active_tis_per_dagrun", "do_xcom_push",
    "multiple_outputs", "executor", "executor_config", "map_index_template", "doc", "doc_md", "doc_json",
    "doc_yaml", "doc_rst", "python_callable_name", "is_mapped", "ui_color", "ui_fgcolor", "inlets", "outlets",
    "is_setup", "is_teardown", "on_failure_fail_dagrun",
)


def _plain(value: Any) -> Any:
    """Enums become their values so the dataclass holds exactly what decoding would give back."""
    return getattr(value, "value", value) if hasattr(value, "value") and isinstance(value, str) else value


def _task_group_tree(group: TaskGroup) -> dict[str, Any]:
    children = []
    for key in sorted(group.children, key=str):
        child = group.children[key]
        if isinstance(child, TaskGroup):
            children.append(_task_group_tree(child))
        else:
            children.append({"task_id": child.task_id})
    return {
        "group_id": group.group_id,
        "prefix_group_id": group.prefix_group_id,
        "tooltip": group.tooltip,
        "ui_color": group.ui_color,
        "ui_fgcolor": group.ui_fgcolor,
        "label": group.label,
        "upstream_group_ids": sorted(g for g in group.upstream_group_ids if g),
        "downstream_group_ids": sorted(g for g in group.downstream_group_ids if g),
        "upstream_task_ids": sorted(group.upstream_task_ids),
        "downstream_task_ids": sorted(group.downstream_task_ids),
        "children": children,
    }


def _mapping_fields(task: TaskNode) -> dict[str, Any]:
    if not isinstance(task, MappedOperator):
        fields: dict[str, Any] = {"template_values": {f: getattr(task, f, None) for f in task.template_fields}}
        groups = mapped_groups_of(task)
        if len(groups) == 1:  # the scheduler maps it as the group: one instance per index of the group's input
            fields.update(is_mapped=True, map_group_id=groups[0].group_id, expand_input={
                "kind": groups[0].expand_input.kind, "target": "group", "value": groups[0].expand_input.value})
        elif groups:  # nested mapped groups: one instance per index of the product of their lengths (Airflow's)
            fields.update(is_mapped=True, map_group_id=groups[-1].group_id, expand_input={
                "kind": "nested-groups", "target": "group",
                "value": [{"kind": g.expand_input.kind, "value": g.expand_input.value} for g in groups]})
        return fields
    partial = {k: v for k, v in task.partial_kwargs.items() if k != "task_id"}
    return {
        "template_values": {f: partial[f] for f in task.template_fields if f in partial},
        "expand_input": {"kind": task.expand_input.kind, "target": task.expand_target,
                         "value": task.expand_input.value},
        "partial_kwargs": partial,
    }


def serialize_task(task: TaskNode, effective_weight: int) -> SerializedTask:
    values: dict[str, Any] = {name: _plain(getattr(task, name, None)) for name in _PLAIN_TASK_FIELDS}
    values.update(
        task_type=task.task_type,
        operator_module=(task.operator_class if isinstance(task, MappedOperator) else type(task)).__module__,
        custom_operator_name=getattr(task, "custom_operator_name", None),
        task_group_id=task.task_group.group_id if task.task_group is not None else None,
        upstream_task_ids=sorted(task.upstream_task_ids),
        downstream_task_ids=sorted(task.downstream_task_ids),
        effective_priority_weight=effective_weight,
        **_weight_fields(task),
        compute=task.compute.to_dict(),
        params=dict(getattr(task, "params", {}) and _as_params(task.params)),
        template_fields=list(task.template_fields),
        template_ext=list(task.template_ext),
        template_fields_renderers=dict(task.template_fields_renderers),
        is_empty=bool(task.inherits_from_empty_operator),
        can_skip_downstream=bool(task._can_skip_downstream),
        is_sensor=bool(task._is_sensor),
        callbacks=[name for name in _CALLBACKS if getattr(task, name, None)],
        extra={name: getattr(task, name, None) for name in task.extra_serialized_fields},
        extra_links={name: link.xcom_key for name, link in sorted(task_links(task).items())} or None,
        **_mapping_fields(task),
    )
    return SerializedTask(**values)


def _weight_fields(task: TaskNode) -> dict[str, Any]:
    """A custom priority weight strategy: its class path as the rule, and its weights per try number."""
    rule = getattr(task, "weight_rule", None)
    if not isinstance(rule, PriorityWeightStrategy):
        return {}
    return {"weight_rule": strategy_path(rule), "weights_by_try": weights_by_try(task, rule)}


def _as_params(params: Any) -> dict[str, Any]:
    return ParamsDict(params).params() if not isinstance(params, ParamsDict) else params.params()


def build_serialized_dag(dag: DAG, *, relative_fileloc: str, file_hash: str) -> SerializedDAG:
    weights = dag.priority_weights()
    tasks = [serialize_task(task, weights[task.task_id]) for task in dag.tasks]
    return SerializedDAG(
        dag_id=dag.dag_id,
        relative_fileloc=relative_fileloc,
        file_hash=file_hash,
        description=dag.description,
        dag_display_name=dag.dag_display_name,
        timetable=dag.timetable,
        timetable_summary=dag.timetable.summary,
        timetable_description=dag.timetable.description,
        timezone=timezone_name(dag.timezone),
        start_date=dag.start_date,
        end_date=dag.end_date,
        catchup=dag.catchup,
        max_active_runs=dag.max_active_runs,
        max_active_tasks=dag.max_active_tasks,
        max_consecutive_failed_dag_runs=dag.max_consecutive_failed_dag_runs,
        dagrun_timeout=dag.dagrun_timeout,
        tags=sorted(dag.tags),
        owner=dag.owner,
        owner_links=dict(dag.owner_links),
        doc_md=dag.doc_md,
        params=dag.params.params(),
        default_args=dict(dag.default_args),
        is_paused_upon_creation=dag.is_paused_upon_creation,
        fail_fast=dag.fail_fast,
        render_template_as_native_obj=dag.render_template_as_native_obj,
        template_searchpath=list(dag.template_searchpath),
        access_control=dag.access_control,
        callbacks=[n for n in ("on_success_callback", "on_failure_callback") if getattr(dag, n, None)],
        edge_info={up: dict(sorted(downs.items())) for up, downs in sorted(dag.edge_info.items())},
        task_group=_task_group_tree(dag.task_group),
        tasks=tasks,
    )
