"""``airflow.notifications.basenotifier`` (Airflow 3 keeps it as a deprecated alias of ``airflow.sdk``'s)."""

from updraft.sdk.notifier import BaseNotifier

__all__ = ["BaseNotifier"]
