"""Sensors DAG files use from Airflow (``airflow.sensors.*`` and the standard provider's ``sensors``)."""

from updraft.sensors.base import BaseSensorOperator, PokeReturnValue, poke_mode_only

__all__ = ["BaseSensorOperator", "PokeReturnValue", "poke_mode_only"]
