"""``airflow.operators.python`` (Airflow 2 path): the standard provider's module under its old name."""

from updraft.operators.python import BranchPythonOperator, PythonOperator, ShortCircuitOperator
from updraft.operators.python_venv import (
    BranchExternalPythonOperator,
    BranchPythonVirtualenvOperator,
    ExternalPythonOperator,
    PythonVirtualenvOperator,
)
from updraft.sdk._internal.unsupported import module_getattr
from updraft.sdk.context import get_current_context

__all__ = [  # the standard provider module's names (updraft/airflow_providers/own/standard/operators/python.py)
    "BranchExternalPythonOperator",
    "BranchPythonOperator",
    "BranchPythonVirtualenvOperator",
    "ExternalPythonOperator",
    "PythonOperator",
    "PythonVirtualenvOperator",
    "ShortCircuitOperator",
    "get_current_context",
]

# Names Airflow has here that Updraft does not support raise an ImportError naming them.
__getattr__ = module_getattr(__name__, globals())
