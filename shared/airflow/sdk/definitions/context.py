"""``airflow.sdk.definitions.context``."""

from updraft.sdk.context import Context, context_merge, get_current_context
from updraft.sdk.parsing_context import get_parsing_context

__all__ = ["Context", "context_merge", "get_current_context", "get_parsing_context"]
