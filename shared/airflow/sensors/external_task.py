"""``airflow.sensors.external_task`` (Airflow 2 path)."""

from updraft.sensors.external_task import ExternalTaskMarker, ExternalTaskSensor

__all__ = ["ExternalTaskMarker", "ExternalTaskSensor"]
