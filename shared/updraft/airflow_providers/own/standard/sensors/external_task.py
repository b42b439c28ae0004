"""``airflow.providers.standard.sensors.external_task``."""

from updraft.sensors.external_task import ExternalTaskMarker, ExternalTaskSensor

__all__ = ["ExternalTaskMarker", "ExternalTaskSensor"]
