"""``airflow.sensors.filesystem`` (Airflow 2 path)."""

from updraft.sensors.filesystem import FileSensor

__all__ = ["FileSensor"]
