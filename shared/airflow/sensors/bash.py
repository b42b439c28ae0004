"""``airflow.sensors.bash`` (Airflow 2 path)."""

from updraft.sensors.bash import BashSensor

__all__ = ["BashSensor"]
