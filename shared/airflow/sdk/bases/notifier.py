"""``airflow.sdk.bases.notifier``."""

from updraft.sdk.notifier import BaseNotifier

__all__ = ["BaseNotifier"]
