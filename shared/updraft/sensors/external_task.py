"""ExternalTaskSensor and ExternalTaskMarker, as Airflow 3.3's standard provider defines them.

The sensor waits for another DAG's run, tasks or task group at the same logical date (or ``execution_delta``
earlier, or the dates ``execution_date_fn`` returns) to reach ``allowed_states``; ``failed_states`` fail it at once
(skip with ``soft_fail``) and ``skipped_states`` skip it. Each poke reads the other runs through the try's
:class:`~updraft.runtime.cross_dag.CrossDag`; ``deferrable=True`` hands the wait to a
:class:`~updraft.triggers.external_task.WorkflowTrigger`. ``check_existence`` checks the DAG, tasks or group on
the first poke as the provider documents it (Airflow 3.3's poke path skips that check; a missing DAG then simply
waits until the timeout).

The marker does nothing when it runs (an ``EmptyOperator``); a clear that takes it also clears
``external_task_id`` and its downstream tasks in ``external_dag_id``'s run at the marker's ``logical_date``,
following further markers up to ``recursion_depth`` (:mod:`updraft.scheduling.commands.marker_clears`).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, ClassVar

from updraft.model.states import DagRunState, TaskInstanceState
from updraft.operators.empty import EmptyOperator
from updraft.sdk.exceptions import AirflowException, AirflowSkipException, TaskDeferred
from updraft.sensors.base import BaseSensorOperator

TASK_STATES: tuple[str | None, ...] = (None, *(s.value for s in TaskInstanceState))
DAG_STATES: tuple[str, ...] = tuple(s.value for s in DagRunState)


class AirflowExternalTaskSensorException(AirflowException):
    """Base exception for all ExternalTaskSensor related errors."""


class ExternalDagNotFoundError(AirflowExternalTaskSensorException):
    """Raised when the external DAG does not exist."""


class ExternalDagDeletedError(AirflowExternalTaskSensorException):
    """Raised when the external DAG was deleted."""


class ExternalTaskNotFoundError(AirflowExternalTaskSensorException):
    """Raised when the external task does not exist."""


class ExternalTaskGroupNotFoundError(AirflowExternalTaskSensorException):
    """Raised when the external task group does not exist."""


class ExternalTaskFailedError(AirflowExternalTaskSensorException):
    """Raised when the external task failed."""


class ExternalTaskGroupFailedError(AirflowExternalTaskSensorException):
    """Raised when the external task group failed."""


class ExternalDagFailedError(AirflowExternalTaskSensorException):
    """Raised when the external DAG failed."""


class DuplicateStateError(AirflowExternalTaskSensorException):
    """Raised when duplicate states are provided across allowed, skipped and failed states."""


def _state_value(state: Any) -> Any:
    return getattr(state, "value", state)


class ExternalTaskSensor(BaseSensorOperator):
    """Waits for a different DAG, task group, or task to complete for a specific logical date."""

    template_fields: ClassVar[tuple[str, ...]] = (
        "external_dag_id", "external_task_id", "external_task_ids", "external_task_group_id")
    ui_color: ClassVar[str] = "#4db7db"

    def __init__(
        self,
        *,
        external_dag_id: str,
        external_task_id: str | None = None,
        external_task_ids: Collection[str] | None = None,
        external_task_group_id: str | None = None,
        allowed_states: Iterable[str] | None = None,
        skipped_states: Iterable[str] | None = None,
        failed_states: Iterable[str] | None = None,
        execution_delta: datetime.timedelta | None = None,
        execution_date_fn: Callable | None = None,
        check_existence: bool = False,
        poll_interval: float | None = None,
        deferrable: bool = False,
        **kwargs: Any,
    ) -> None:
        if poll_interval is not None:
            import warnings

            warnings.warn("Parameter `poll_interval` is deprecated and will be removed in a future release. "
                          "Use `poke_interval` instead.", DeprecationWarning, stacklevel=2)
            kwargs.setdefault("poke_interval", poll_interval)
        super().__init__(**kwargs)
        self.allowed_states: list[Any] = ([_state_value(s) for s in allowed_states] if allowed_states
                                          else [TaskInstanceState.SUCCESS.value])
        self.skipped_states: list[Any] = [_state_value(s) for s in skipped_states] if skipped_states else []
        self.failed_states: list[Any] = [_state_value(s) for s in failed_states] if failed_states else []
        total_states = set(self.allowed_states + self.skipped_states + self.failed_states)
        if len(total_states) != len(self.allowed_states) + len(self.skipped_states) + len(self.failed_states):
            raise DuplicateStateError(
                "Duplicate values provided across allowed_states, skipped_states and failed_states.")
        if not external_task_ids:
            external_task_ids = None
        if external_task_id is not None and external_task_ids is not None:
            raise ValueError(
                "Only one of `external_task_id` or `external_task_ids` may be provided to ExternalTaskSensor; "
                "use external_task_id or external_task_ids or external_task_group_id.")
        if external_task_id is not None:
            external_task_ids = [external_task_id]
        if external_task_group_id is not None and external_task_ids is not None:
            raise ValueError(
                "Only one of `external_task_group_id` or `external_task_ids` may be provided to "
                "ExternalTaskSensor; use external_task_id or external_task_ids or external_task_group_id.")
        if external_task_ids or external_task_group_id:
            if not total_states <= set(TASK_STATES):
                raise ValueError(
                    "Valid values for `allowed_states`, `skipped_states` and `failed_states` when "
                    "`external_task_id` or `external_task_ids` or `external_task_group_id` is not `None`: "
                    f"{TASK_STATES}")
        elif not total_states <= set(DAG_STATES):
            raise ValueError(
                "Valid values for `allowed_states`, `skipped_states` and `failed_states` when "
                f"`external_task_id` and `external_task_group_id` is `None`: {DAG_STATES}")
        if execution_delta is not None and execution_date_fn is not None:
            raise ValueError(
                "Only one of `execution_delta` or `execution_date_fn` may be provided to ExternalTaskSensor; "
                "not both.")
        self.execution_delta = execution_delta
        self.execution_date_fn = execution_date_fn
        self.external_dag_id = external_dag_id
        self.external_task_id = external_task_id
        self.external_task_ids = external_task_ids
        self.external_task_group_id = external_task_group_id
        self.check_existence = check_existence
        self._has_checked_existence = False
        self.deferrable = deferrable
        self.external_dates_filter: str | None = None

    # -- which runs ------------------------------------------------------------------------------------------
    def _get_logical_date(self, context: Any) -> datetime.datetime:
        logical_date = context.get("logical_date")
        if logical_date:
            return logical_date  # type: ignore[no-any-return]
        dag_run = context.get("dag_run")
        if dag_run is not None and getattr(dag_run, "run_after", None):
            return dag_run.run_after  # type: ignore[no-any-return]
        raise ValueError("Either `logical_date` or `dag_run.run_after` must be provided in the context")

    def _get_dttm_filter(self, context: Any) -> Sequence[datetime.datetime]:
        logical_date = self._get_logical_date(context)
        if self.execution_delta:
            return [logical_date - self.execution_delta]
        if self.execution_date_fn:
            # lazy: the task child only (DAG parsing never imports sdk.execution)
            from updraft.sdk.execution import determine_kwargs

            kwargs = {k: v for k, v in context.items() if k not in {"execution_date", "logical_date"}}
            kwargs["context"] = context
            result = self.execution_date_fn(
                logical_date, **determine_kwargs(self.execution_date_fn, [logical_date], kwargs))
            return result if isinstance(result, list) else [result]
        return [logical_date]

    @staticmethod
    def _serialize_dttm_filter(dttm_filter: Sequence[datetime.datetime]) -> str:
        return ",".join(d.isoformat() for d in dttm_filter)

    # -- poking ----------------------------------------------------------------------------------------------
    def poke(self, context: Any) -> bool:
        if self.external_task_ids and len(self.external_task_ids) > len(set(self.external_task_ids)):
            raise ValueError("Duplicate task_ids passed in external_task_ids parameter")
        dttm_filter = self._get_dttm_filter(context)
        self.external_dates_filter = self._serialize_dttm_filter(dttm_filter)
        if self.external_task_ids:
            self.log.info("Poking for tasks %s in dag %s on %s ... ", self.external_task_ids, self.external_dag_id,
                          self.external_dates_filter)
        elif self.external_task_group_id:
            self.log.info("Poking for task_group '%s' in dag '%s' on %s ... ", self.external_task_group_id,
                          self.external_dag_id, self.external_dates_filter)
        else:
            self.log.info("Poking for DAG '%s' on %s ... ", self.external_dag_id, self.external_dates_filter)
        cross_dag = context["ti"].cross_dag
        if self.check_existence and not self._has_checked_existence:
            self._check_for_existence(cross_dag)

        def count(states: list[Any]) -> float:
            return cross_dag.count_matching(  # type: ignore[no-any-return]
                self.external_dag_id, states, task_ids=self.external_task_ids,
                task_group_id=self.external_task_group_id, logical_dates=list(dttm_filter))

        if self.failed_states:
            self._handle_failed_states(count(self.failed_states))
        if self.skipped_states:
            self._handle_skipped_states(count(self.skipped_states))
        return count(self.allowed_states) == len(dttm_filter)

    def _handle_failed_states(self, count_failed: float) -> None:
        if count_failed <= 0:
            return
        if self.external_task_ids:
            what = f"Some of the external tasks {self.external_task_ids} in DAG {self.external_dag_id} failed."
            error: type[AirflowException] = ExternalTaskFailedError
        elif self.external_task_group_id:
            what = (f"The external task_group '{self.external_task_group_id}' in DAG '{self.external_dag_id}' "
                    "failed.")
            error = ExternalTaskGroupFailedError
        else:
            what = f"The external DAG {self.external_dag_id} failed."
            error = ExternalDagFailedError
        if self.soft_fail:
            raise AirflowSkipException(f"{what[:-1]}. Skipping due to soft_fail.")
        raise error(what)

    def _handle_skipped_states(self, count_skipped: float) -> None:
        if count_skipped <= 0:
            return
        if self.external_task_ids:
            what = f"Some of the external tasks {self.external_task_ids} in DAG {self.external_dag_id}"
        elif self.external_task_group_id:
            what = f"The external task_group '{self.external_task_group_id}' in DAG {self.external_dag_id}"
        else:
            what = f"The external DAG {self.external_dag_id}"
        raise AirflowSkipException(f"{what} reached a state in our states-to-skip-on list. Skipping.")

    def _check_for_existence(self, cross_dag: Any) -> None:
        presence = cross_dag.dag_presence(self.external_dag_id)
        if presence == "missing":
            raise ExternalDagNotFoundError(f"The external DAG {self.external_dag_id} does not exist.")
        if presence == "deleted":
            raise ExternalDagDeletedError(f"The external DAG {self.external_dag_id} was deleted.")
        for task_id in cross_dag.missing_tasks(self.external_dag_id, self.external_task_ids or ()):
            raise ExternalTaskNotFoundError(
                f"The external task {task_id} in DAG {self.external_dag_id} does not exist.")
        if self.external_task_group_id and not cross_dag.has_task_group(self.external_dag_id,
                                                                         self.external_task_group_id):
            raise ExternalTaskGroupNotFoundError(
                f"The external task group '{self.external_task_group_id}' in DAG '{self.external_dag_id}' "
                "does not exist.")
        self._has_checked_existence = True

    # -- running ---------------------------------------------------------------------------------------------
    def execute(self, context: Any) -> Any:
        """Poke in the worker, or with ``deferrable=True`` defer to a ``WorkflowTrigger`` (timeout: the
        sensor's, else ``execution_timeout``)."""
        if not self.deferrable:
            return super().execute(context)
        # lazy: the task child only (the trigger when the task defers)
        from updraft.triggers.external_task import WorkflowTrigger

        timeout_value = self.timeout
        if not timeout_value and self.execution_timeout:
            timeout_value = self.execution_timeout.total_seconds()
        dttm_filter = self._get_dttm_filter(context)
        raise TaskDeferred(
            timeout=datetime.timedelta(seconds=timeout_value) if timeout_value else None,
            trigger=WorkflowTrigger(
                external_dag_id=self.external_dag_id, external_task_group_id=self.external_task_group_id,
                external_task_ids=self.external_task_ids, allowed_states=self.allowed_states,
                failed_states=self.failed_states, skipped_states=self.skipped_states,
                poke_interval=self.poke_interval, soft_fail=self.soft_fail, logical_dates=list(dttm_filter),
                run_ids=None),
            method_name="execute_complete",
        )

    def execute_complete(self, context: Any, event: dict[str, Any] | None = None) -> None:
        """Back from the trigger: success returns, skipped skips, failed fails (skips with ``soft_fail``)."""
        if event is None:
            raise ExternalTaskNotFoundError("No event received from trigger")
        self.external_dates_filter = self._serialize_dttm_filter(self._get_dttm_filter(context))
        status = event.get("status")
        if status == "success":
            self.log.info("External tasks %s has executed successfully.", self.external_task_ids)
        elif status == "skipped":
            raise AirflowSkipException("External job has skipped skipping.")
        elif status == "failed":
            if self.soft_fail:
                raise AirflowSkipException("External job has failed skipping.")
            raise ExternalDagFailedError("External job has failed.")
        else:
            if self.soft_fail:
                raise AirflowSkipException("External job has failed skipping.")
            raise ExternalTaskNotFoundError("Error occurred while trying to retrieve task status. Please, check "
                                            "the name of executed task and Dag.")


class ExternalTaskMarker(EmptyOperator):
    """Marks that ``external_task_id`` of ``external_dag_id`` depends on this task, so clearing this task clears
    that one (and its downstream tasks) too, transitively up to ``recursion_depth`` markers deep."""

    template_fields: ClassVar[tuple[str, ...]] = ("external_dag_id", "external_task_id", "logical_date")
    ui_color: ClassVar[str] = "#4db7db"
    extra_serialized_fields: ClassVar[tuple[str, ...]] = ("recursion_depth",)

    def __init__(self, *, external_dag_id: str, external_task_id: str,
                 logical_date: str | datetime.datetime | None = "{{ logical_date.isoformat() }}",
                 recursion_depth: int = 10, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.external_dag_id = external_dag_id
        self.external_task_id = external_task_id
        if isinstance(logical_date, datetime.datetime):
            self.logical_date = logical_date.isoformat()
        elif isinstance(logical_date, str):
            self.logical_date = logical_date
        else:
            raise TypeError(f"Expected str or datetime.datetime type for logical_date. Got {type(logical_date)}")
        if recursion_depth <= 0:
            raise ValueError("recursion_depth should be a positive integer")
        self.recursion_depth = recursion_depth
