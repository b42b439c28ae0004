"""``airflow.utils.platform``."""

from updraft.sdk.helpers import getuser

__all__ = ["getuser"]
