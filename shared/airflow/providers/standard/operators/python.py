"""``airflow.providers.standard.operators.python``; virtualenv operators raise a clear error."""

from updraft.operators.python import (
    BranchPythonOperator,
    PythonOperator,
    ShortCircuitOperator,
)
from updraft.sdk._internal.unsupported import module_getattr
from updraft.sdk.context import get_current_context

__all__ = ["BranchPythonOperator", "PythonOperator", "ShortCircuitOperator", "get_current_context"]

# Names Airflow has here that Updraft does not support raise an ImportError naming them.
__getattr__ = module_getattr(__name__, globals())
