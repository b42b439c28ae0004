"""``airflow.providers.standard.triggers.file``."""

from updraft.triggers.file import DirectoryFileDeleteTrigger, FileDeleteTrigger, FileTrigger

__all__ = ["DirectoryFileDeleteTrigger", "FileDeleteTrigger", "FileTrigger"]
