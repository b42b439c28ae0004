"""``airflow.sensors.python`` (Airflow 2 path)."""

from updraft.sensors.python import PythonSensor

__all__ = ["PythonSensor"]
