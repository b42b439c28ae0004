"""``airflow.models.taskreschedule``: ``TaskReschedule`` imports, and any use raises (updraft.sdk.server_side)."""

from updraft.sdk.server_side import server_only_class

TaskReschedule = server_only_class("airflow.models.taskreschedule.TaskReschedule")

__all__ = ["TaskReschedule"]
