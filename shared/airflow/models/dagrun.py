"""``airflow.models.dagrun``: ``DagRun`` imports, and any use raises (updraft.sdk.server_side)."""

from updraft.sdk.server_side import server_only_class

DagRun = server_only_class("airflow.models.dagrun.DagRun")

__all__ = ["DagRun"]
