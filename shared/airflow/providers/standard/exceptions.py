"""``airflow.providers.standard.exceptions``: the ExternalTaskSensor errors."""

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
]
