"""``airflow.utils.edgemodifier`` (Airflow 2 path)."""

from updraft.sdk.edges import EdgeModifier, Label

__all__ = ["EdgeModifier", "Label"]
