"""``airflow.sdk.bases.hook``."""

from updraft.sdk.hooks import BaseHook

__all__ = ["BaseHook"]
