"""``airflow.providers.standard.exceptions``: the ExternalTaskSensor and Human-in-the-loop errors."""

from updraft.operators.hitl import HITLRejectException, HITLTimeoutError, HITLTriggerEventError
from updraft.sensors.external_task import (
    AirflowExternalTaskSensorException,
    DuplicateStateError,
    ExternalDagDeletedError,
    ExternalDagFailedError,
    ExternalDagNotFoundError,
    ExternalTaskFailedError,
    ExternalTaskGroupFailedError,
    ExternalTaskGroupNotFoundError,
    ExternalTaskNotFoundError,
)

__all__ = [
    "AirflowExternalTaskSensorException",
    "DuplicateStateError",
    "ExternalDagDeletedError",
    "ExternalDagFailedError",
    "ExternalDagNotFoundError",
    "ExternalTaskFailedError",
    "ExternalTaskGroupFailedError",
    "ExternalTaskGroupNotFoundError",
    "ExternalTaskNotFoundError",
    "HITLRejectException",
    "HITLTimeoutError",
    "HITLTriggerEventError",
]
