"""``airflow.utils.context`` (Airflow 2 path of ``Context``)."""

from updraft.sdk.context import Context, get_current_context

__all__ = ["Context", "get_current_context"]
