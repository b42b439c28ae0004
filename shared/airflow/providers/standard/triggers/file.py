"""``airflow.providers.standard.triggers.file``."""

from updraft.triggers.file import FileTrigger

__all__ = ["FileTrigger"]
