"""``airflow.utils.dag_parsing_context`` (Airflow 2 path)."""

from updraft.sdk.parsing_context import AirflowParsingContext, get_parsing_context

__all__ = ["AirflowParsingContext", "get_parsing_context"]
