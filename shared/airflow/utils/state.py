"""``airflow.utils.state``: task instance and DAG run states."""

from updraft.model.states import DagRunState, TaskInstanceState
from updraft.sdk.state import State

__all__ = ["DagRunState", "State", "TaskInstanceState"]
