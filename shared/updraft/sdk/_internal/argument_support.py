"""The one table of every argument Airflow 3.3's authoring surface accepts: honoured, or refused and why.

A DAG file written for Airflow may pass any argument of ``DAG`` / ``@dag``, ``BaseOperator`` / ``@task``,
``BaseSensorOperator`` and ``TaskGroup`` / ``@task_group``. Updraft must never take one and then behave
differently, so each is either honoured (kept on the object under ``attribute``, from which serialization and the
runtime read it) or refused: passing it with anything but Airflow's default fails the import with an
``UnsupportedFeatureError`` naming it. tests/unit/sdk/test_argument_support.py checks this table against the
argument list read from Airflow's source (bench/airflow_arguments.py), so a new Airflow argument fails that test
until it is entered here; the README's refusal list is checked against it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from updraft.sdk.exceptions import UnsupportedFeatureError


@dataclass(frozen=True)
class Honoured:
    """Updraft does what Airflow does with the argument; ``attribute`` is where the built object keeps it."""

    attribute: str


@dataclass(frozen=True)
class Refused:
    """Updraft cannot do what Airflow does with the argument; passing anything but ``default`` is an import error."""

    reason: str
    default: Any = None


@dataclass(frozen=True)
class Removed:
    """Airflow 3 itself accepts the argument, warns that its feature was removed and ignores it; so does Updraft."""

    warning: str


def _same(*names: str) -> dict[str, Honoured | Refused | Removed]:
    return {name: Honoured(name) for name in names}


_NO_SUBPROCESS_USER = "tasks run as the Lambda or Fargate task's own user; there is no sudo/impersonation"
_RESOURCES = ('operator resources are not scheduled on; size the task with executor="fargate" and '
              'executor_config={"cpu": ..., "memory": ...}')

_DAG: dict[str, Honoured | Refused | Removed] = {
    **_same("dag_id", "description", "schedule", "start_date", "end_date", "template_searchpath",
            "template_undefined", "user_defined_macros", "user_defined_filters", "default_args", "max_active_tasks",
            "max_active_runs", "max_consecutive_failed_dag_runs", "dagrun_timeout", "catchup",
            "on_success_callback", "on_failure_callback", "doc_md", "params", "access_control",
            "is_paused_upon_creation", "jinja_environment_kwargs", "render_template_as_native_obj", "tags",
            "owner_links", "auto_register", "fail_fast", "dag_display_name", "disable_bundle_versioning"),
    "sla_miss_callback": Removed("The SLA feature is removed in Airflow 3.0"),
    "deadline": Refused("deadline alerts are not implemented"),
    "allowed_run_types": Refused("restricting a DAG's run types is not implemented; every run type is allowed"),
    "rerun_with_latest_version": Refused("Updraft keeps no DAG bundle versions: every run and rerun uses the "
                                         "latest parsed DAG file"),
    "task_group": Refused("a DAG's root task group is created by the DAG; group tasks with TaskGroup inside it"),
}

_BASE_OPERATOR: dict[str, Honoured | Refused | Removed] = {
    **_same("task_id", "owner", "email", "email_on_retry", "email_on_failure", "retries", "retry_delay",
            "retry_exponential_backoff", "max_retry_delay", "start_date", "end_date", "depends_on_past",
            "ignore_first_depends_on_past", "wait_for_past_depends_before_skipping", "wait_for_downstream",
            "params", "default_args", "priority_weight", "weight_rule", "queue", "pool", "pool_slots",
            "execution_timeout", "on_execute_callback", "on_failure_callback", "on_success_callback",
            "on_retry_callback", "on_skipped_callback", "trigger_rule", "map_index_template",
            "max_active_tis_per_dag", "max_active_tis_per_dagrun", "executor", "executor_config", "do_xcom_push",
            "multiple_outputs", "inlets", "outlets", "doc", "doc_md", "doc_json", "doc_yaml", "doc_rst",
            "task_display_name", "render_template_as_native_obj", "retry_policy"),
    "sla": Removed("The SLA feature is removed in Airflow 3.0"),
    "dag": Honoured("dag"),
    "task_group": Honoured("task_group"),
    "pre_execute": Honoured("_pre_execute_hook"),
    "post_execute": Honoured("_post_execute_hook"),
    "run_as_user": Refused(_NO_SUBPROCESS_USER),
    "resources": Refused(_RESOURCES),
    "logger_name": Refused("task logs go to the task instance's CloudWatch log stream; a custom logger name is "
                           "not honoured"),
    "allow_nested_operators": Refused("Updraft does not watch for operators executed inside another operator's "
                                      "execute, so it cannot warn about them", default=True),
}

_SENSOR: dict[str, Honoured | Refused | Removed] = _same(
    "poke_interval", "timeout", "soft_fail", "mode", "exponential_backoff", "max_wait", "silent_fail", "never_fail")

_TASK_DECORATOR: dict[str, Honoured | Refused | Removed] = _same("multiple_outputs", "templates_dict",
                                                       "show_return_value_in_logs")

_TASK_GROUP: dict[str, Honoured | Refused | Removed] = {
    **_same("prefix_group_id", "parent_group", "dag", "default_args", "tooltip", "doc_md", "ui_color", "ui_fgcolor",
            "group_display_name"),
    "group_id": Honoured("_group_id"),
    "add_suffix_on_collision": Honoured("_group_id"),  # its effect: a colliding group_id gets a suffix
}

# Surface -> argument -> support. ``@dag`` forwards to DAG, ``@task`` adds its own to BaseOperator's, and
# ``@task_group`` forwards to TaskGroup, so those share their class's entries.
ARGUMENTS: dict[str, dict[str, Honoured | Refused | Removed]] = {
    "DAG": _DAG,
    "dag": _DAG,
    "BaseOperator": _BASE_OPERATOR,
    "BaseSensorOperator": _SENSOR,
    "task": _TASK_DECORATOR,
    "TaskGroup": _TASK_GROUP,
    "task_group": _TASK_GROUP,
}


def refuse_unsupported(surface: str, given: Mapping[str, Any]) -> None:
    """Raise UnsupportedFeatureError for the first refused argument of ``surface`` passed with a non-default value."""
    for name, value in given.items():
        rule = ARGUMENTS[surface].get(name)
        if isinstance(rule, Refused) and value != rule.default:
            raise UnsupportedFeatureError(f"{surface}({name}=...)", rule.reason)


def refusals() -> dict[str, dict[str, str]]:
    """Each class surface's refused arguments and why (for the README's authoring-surface section)."""
    return {surface: {name: rule.reason for name, rule in table.items() if isinstance(rule, Refused)}
            for surface, table in ARGUMENTS.items() if surface[0].isupper()}
