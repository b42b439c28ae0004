"""``airflow.providers.standard.sensors.filesystem``."""

from updraft.sensors.filesystem import FileSensor

__all__ = ["FileSensor"]
