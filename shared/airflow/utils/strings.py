"""``airflow.utils.strings``."""

from updraft.sdk.helpers import TRUE_LIKE_VALUES, get_random_string, to_boolean

__all__ = ["TRUE_LIKE_VALUES", "get_random_string", "to_boolean"]
