"""``airflow.providers.standard.triggers.external_task``."""

from updraft.triggers.external_task import DagStateTrigger, WorkflowTrigger

__all__ = ["DagStateTrigger", "WorkflowTrigger"]
