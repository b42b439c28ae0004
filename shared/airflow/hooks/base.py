"""``airflow.hooks.base`` (Airflow 2's path of ``BaseHook``)."""

from updraft.sdk.hooks import BaseHook

__all__ = ["BaseHook"]
