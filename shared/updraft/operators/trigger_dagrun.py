"""TriggerDagRunOperator: start a run of another DAG, optionally wait for it, as Airflow 3.3's standard provider.

Airflow 3's operator raises ``DagRunTriggerException`` and its task runner asks the execution API to create the
run; here ``execute`` asks the try's :class:`~updraft.runtime.cross_dag.CrossDag` directly, with the same
outcomes: the run is ``operator_triggered`` with id ``manual__<logical date>`` unless ``trigger_run_id`` names it;
an existing run id is cleared (``reset_dag_run``), skips the task (``skip_when_already_exists``) or fails it
without retry; the run id is pushed as the ``trigger_run_id`` XCom. ``wait_for_completion`` polls the run's state
every ``poke_interval`` seconds in the worker, or with ``deferrable=True`` hands the wait to a
:class:`~updraft.triggers.external_task.DagStateTrigger`. Updraft gives every run a logical date, so
``logical_date=None`` means the trigger time, as the REST API's trigger does.
"""

from __future__ import annotations

import datetime
import json
import secrets
import string
import time
from typing import Any, ClassVar

from updraft.model.states import DagRunState
from updraft.sdk import timezone
from updraft.sdk.baseoperator import BaseOperator
from updraft.sdk.exceptions import (
    AirflowBadRequest,
    AirflowException,
    AirflowFailException,
    AirflowSkipException,
    DagRunAlreadyExists,
    TaskDeferred,
    UnsupportedFeatureError,
)
from updraft.sdk.param import NOTSET

XCOM_RUN_ID = "trigger_run_id"


class DagIsPaused(AirflowException):
    """Raised when the DAG to trigger is paused and ``fail_when_dag_is_paused`` is set."""

    def __init__(self, dag_id: str) -> None:
        super().__init__(dag_id)
        self.dag_id = dag_id

    def __str__(self) -> str:
        return f"Dag {self.dag_id} is paused"


def _validate_datetime_param(name: str, value: Any) -> Any:
    if value is NOTSET or value is None or isinstance(value, (str, datetime.datetime)):
        return value
    raise TypeError(f"Expected str, datetime.datetime, or None for parameter '{name}'. Got {type(value).__name__}")


def _parse_datetime_param(value: str | datetime.datetime | None) -> datetime.datetime | None:
    if value is None or isinstance(value, datetime.datetime):
        return value

    return timezone.parse(value)


def _random_suffix(length: int = 8) -> str:
    """Airflow's ``get_random_string``: a run without a logical date gets a unique id."""
    return "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(length))


class TriggerDagRunOperator(BaseOperator):
    """Triggers a run of ``trigger_dag_id`` (see the module notes for what each argument does)."""

    template_fields: ClassVar[tuple[str, ...]] = (
        "trigger_dag_id",
        "trigger_run_id",
        "logical_date",
        "conf",
        "wait_for_completion",
        "skip_when_already_exists",
    )
    template_fields_renderers: ClassVar[dict[str, str]] = {"conf": "py"}
    ui_color: ClassVar[str] = "#ffefeb"

    def __init__(
        self,
        *,
        trigger_dag_id: str,
        trigger_run_id: str | None = None,
        conf: dict | None = None,
        logical_date: str | datetime.datetime | None = NOTSET,
        run_after: str | datetime.datetime | None = NOTSET,
        reset_dag_run: bool = False,
        wait_for_completion: bool = False,
        poke_interval: float = 60,
        allowed_states: list[str] | None = None,
        failed_states: list[str] | None = None,
        skip_when_already_exists: bool = False,
        fail_when_dag_is_paused: bool = False,
        note: str | None = None,
        deferrable: bool = False,
        openlineage_inject_parent_info: bool = True,
        **kwargs: Any,
    ) -> None:
        if run_after is not NOTSET:
            # Every Updraft run may start at once; a run_after in the future would be ignored, so it is refused.
            raise UnsupportedFeatureError("TriggerDagRunOperator(run_after=...)",
                                          "a triggered run starts when it is created; leave run_after unset")
        super().__init__(**kwargs)
        self.trigger_dag_id = trigger_dag_id
        self.trigger_run_id = trigger_run_id
        self.conf = conf
        self.reset_dag_run = reset_dag_run
        self.wait_for_completion = wait_for_completion
        self.poke_interval = poke_interval
        self.allowed_states = [DagRunState(s) for s in allowed_states] if allowed_states else [DagRunState.SUCCESS]
        self.failed_states = ([DagRunState(s) for s in failed_states] if failed_states is not None
                              else [DagRunState.FAILED])
        self.skip_when_already_exists = skip_when_already_exists
        self.fail_when_dag_is_paused = fail_when_dag_is_paused
        # OpenLineage is not part of Updraft, so there is never parent information to inject (as in Airflow when
        # the OpenLineage provider is not enabled).
        self.openlineage_inject_parent_info = openlineage_inject_parent_info
        self.note = note
        self.deferrable = deferrable
        self.logical_date = logical_date

    def execute(self, context: Any) -> None:
        _validate_datetime_param("logical_date", self.logical_date)
        parsed_logical_date = (timezone.utcnow() if self.logical_date is NOTSET
                               else _parse_datetime_param(self.logical_date))
        try:
            if self.conf and isinstance(self.conf, str):
                self.conf = json.loads(self.conf)
            json.dumps(self.conf)
        except (TypeError, ValueError):
            raise ValueError(f"conf parameter should be JSON Serializable: {self.conf}") from None
        if self.trigger_run_id:
            run_id = str(self.trigger_run_id)
        elif parsed_logical_date is not None:
            run_id = f"manual__{parsed_logical_date.isoformat()}"
        else:
            run_id = f"manual__{timezone.utcnow().isoformat()}_{_random_suffix()}"
        self.trigger_run_id = run_id
        cross_dag = context["ti"].cross_dag
        if self.fail_when_dag_is_paused and cross_dag.is_paused(self.trigger_dag_id):
            raise DagIsPaused(dag_id=self.trigger_dag_id)
        self.log.info("Triggering Dag Run %s of %s", run_id, self.trigger_dag_id)
        try:
            run = cross_dag.trigger(self.trigger_dag_id, run_id=run_id, conf=self.conf,
                                    logical_date=parsed_logical_date, reset_dag_run=self.reset_dag_run,
                                    note=self.note)
        except DagRunAlreadyExists:
            if self.skip_when_already_exists:
                raise AirflowSkipException(
                    "Skipping due to skip_when_already_exists is set to True and DagRunAlreadyExists") from None
            # Airflow's task runner marks the task failed at once (no retry) when the run exists.
            raise AirflowFailException(f"A run already exists for Dag '{self.trigger_dag_id}' with run_id "
                                       f"'{run_id}'") from None
        except AirflowBadRequest as err:
            raise AirflowException(str(err)) from None
        self.log.info("Dag Run triggered successfully: %s", run.run_id)
        ti = context["ti"]
        ti.xcom_push(key=XCOM_RUN_ID, value=run_id)
        if not self.wait_for_completion:
            if self.deferrable:
                self.log.info("Ignoring deferrable=True because wait_for_completion=False.")
            return
        if self.deferrable:
            # lazy: the task child only (the trigger when the task defers)
            from updraft.triggers.external_task import DagStateTrigger

            raise TaskDeferred(
                trigger=DagStateTrigger(dag_id=self.trigger_dag_id,
                                        states=[*self.allowed_states, *self.failed_states],
                                        execution_dates=None, run_ids=[run_id], poll_interval=self.poke_interval),
                method_name="execute_complete",
            )
        self._wait(cross_dag, run_id)

    def _wait(self, cross_dag: Any, run_id: str) -> None:
        """Poll the run's state every ``poke_interval`` until it is allowed (done) or failed (raise)."""
        while True:
            self.log.info("Waiting for %s on %s to become allowed state %s ...", self.trigger_dag_id, run_id,
                          [s.value for s in self.allowed_states])
            time.sleep(self.poke_interval)
            state = cross_dag.run_state(self.trigger_dag_id, run_id)
            if state in self.failed_states:
                raise AirflowException(f"{self.trigger_dag_id} failed with failed state {state}")
            if state in self.allowed_states:
                self.log.info("%s finished with allowed state %s", self.trigger_dag_id, state)
                return

    def execute_complete(self, context: Any, event: tuple[str, dict[str, Any]]) -> None:
        """Back from the deferral: fail when a triggered run ended in a failed state."""
        _, event_data = event
        run_ids = event_data["run_ids"]
        self.trigger_run_id = run_ids[0] if len(run_ids) == 1 else None
        failed = []
        for run_id in run_ids:
            state = event_data.get(run_id)
            if state in self.failed_states:
                failed.append(run_id)
            elif state in self.allowed_states:
                self.log.info("%s finished with allowed state %s for run_id %s", self.trigger_dag_id, state, run_id)
        if failed:
            raise AirflowException(f"{self.trigger_dag_id} failed with failed states "
                                   f"{[s.value for s in self.failed_states]} for run_ids {failed}")
