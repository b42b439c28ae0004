"""``airflow.models.taskinstance``: ``TaskInstance`` and ``clear_task_instances`` import, and any use raises
(updraft.sdk.server_side); ``TaskInstanceKey`` is the real key."""

from updraft.sdk.server_side import server_only_class, server_only_function
from updraft.sdk.ti_key import TaskInstanceKey

TaskInstance = server_only_class("airflow.models.taskinstance.TaskInstance")
clear_task_instances = server_only_function("airflow.models.taskinstance.clear_task_instances")

__all__ = ["TaskInstance", "TaskInstanceKey", "clear_task_instances"]
