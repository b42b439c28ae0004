"""``airflow.sdk.definitions.edges``."""

from updraft.sdk.edges import EdgeModifier, Label

__all__ = ["EdgeModifier", "Label"]
