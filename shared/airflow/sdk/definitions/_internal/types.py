"""``airflow.sdk.definitions._internal.types``: the argument sentinels."""

from updraft.sdk.notset import NOTSET, SET_DURING_EXECUTION, ArgNotSet, SetDuringExecution, is_arg_set

__all__ = ["NOTSET", "SET_DURING_EXECUTION", "ArgNotSet", "SetDuringExecution", "is_arg_set"]
