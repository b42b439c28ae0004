"""``airflow.sensors`` (Airflow 2 paths of the standard sensors)."""

from updraft.sensors.base import BaseSensorOperator

__all__ = ["BaseSensorOperator"]
