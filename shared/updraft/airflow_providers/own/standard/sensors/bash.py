"""``airflow.providers.standard.sensors.bash``."""

from updraft.sensors.bash import BashSensor

__all__ = ["BashSensor"]
