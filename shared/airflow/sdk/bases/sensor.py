"""``airflow.sdk.bases.sensor``."""

from updraft.sensors.base import (
    BaseSensorOperator,
    PokeReturnValue,
    poke_mode_only,
)

__all__ = ["BaseSensorOperator", "PokeReturnValue", "poke_mode_only"]
