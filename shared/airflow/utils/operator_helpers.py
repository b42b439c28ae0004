"""``airflow.utils.operator_helpers``: calling a user's callable with the keyword arguments it accepts."""

from updraft.sdk.execution import KeywordParameters, determine_kwargs, make_kwargs_callable

__all__ = ["KeywordParameters", "determine_kwargs", "make_kwargs_callable"]
