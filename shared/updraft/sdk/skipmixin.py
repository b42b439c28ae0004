"""Airflow's ``SkipMixin``: an operator that decides which downstream tasks run (``BranchSQLOperator``, ...).

``skip_all_except(ti, branch_task_ids)`` follows the given tasks and skips every other direct downstream task,
through the same try decision as ``@task.branch`` (``ti.skip_all_except``), with Airflow's checks of the ids.
``skip(ti, tasks)`` (skip named tasks anywhere in the run) is refused: Updraft skips only what a branch or a
short-circuit decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import GeneratorType
from typing import Any, ClassVar

from updraft.sdk.exceptions import AirflowException, UnsupportedFeatureError
from updraft.sdk.logging_mixin import LoggingMixin


class SkipMixin(LoggingMixin):
    """Mixed into an operator that skips some of its downstream tasks."""

    # Tells the serializer this task may skip its downstream tasks (as Updraft's branch operators do).
    _can_skip_downstream: ClassVar[bool] = True
    inherits_from_skipmixin: ClassVar[bool] = True

    def skip(self, ti: Any, tasks: Iterable[Any]) -> None:
        raise UnsupportedFeatureError("SkipMixin.skip", "skip downstream tasks with skip_all_except (a branch), "
                                      "@task.branch or @task.short_circuit")

    def skip_all_except(self, ti: Any, branch_task_ids: str | Iterable[str] | None) -> None:
        """Follow ``branch_task_ids`` (a task id, several, or None for none) and skip the other direct downstream
        tasks."""
        if branch_task_ids and isinstance(branch_task_ids, GeneratorType):
            branch_task_ids = list(branch_task_ids)
        if isinstance(branch_task_ids, str):
            followed: set[str] = {branch_task_ids}
        elif isinstance(branch_task_ids, Iterable):
            followed = set(branch_task_ids)
            invalid = {(bti, type(bti).__name__) for bti in followed if not isinstance(bti, str)}
            if invalid:
                raise AirflowException(f"Unable to branch to the specified tasks. The branching function returned "
                                       f"invalid 'branch_task_ids': {invalid}. Please check that your function "
                                       "returns an Iterable of valid task IDs that exist in your DAG.")
        elif branch_task_ids is None:
            followed = set()
        else:
            raise AirflowException("'branch_task_ids' must be either None, a task ID, or an Iterable of IDs, "
                                   f"but got {type(branch_task_ids).__name__!r}.")
        self.log.info("Following branch %s", followed)
        dag = getattr(self, "dag", None)
        if dag is not None:
            unknown = followed - set(dag.task_ids) - set(getattr(dag, "task_group_dict", {}))
            if unknown:
                raise AirflowException(f"'branch_task_ids' must contain only valid task_ids. Invalid tasks found: "
                                       f"{unknown}.")
        ti.skip_all_except(sorted(followed))
