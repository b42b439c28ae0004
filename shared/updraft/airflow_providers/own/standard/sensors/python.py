"""``airflow.providers.standard.sensors.python``."""

from updraft.sensors.python import PythonSensor

__all__ = ["PythonSensor"]
