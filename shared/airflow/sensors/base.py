"""``airflow.sensors.base`` (Airflow 2 path)."""

from updraft.sensors.base import (
    BaseSensorOperator,
    PokeReturnValue,
    poke_mode_only,
)

__all__ = ["BaseSensorOperator", "PokeReturnValue", "poke_mode_only"]
