"""``airflow.operators.python`` (Airflow 2 path): the standard provider's module under its old name."""

from airflow.providers.standard.operators.python import (
    BranchExternalPythonOperator,
    BranchPythonOperator,
    BranchPythonVirtualenvOperator,
    ExternalPythonOperator,
    PythonOperator,
    PythonVirtualenvOperator,
    ShortCircuitOperator,
    __all__,  # the provider module's names are this module's
    get_current_context,
)
from updraft.sdk._internal.unsupported import module_getattr

# Names Airflow has here that Updraft does not support raise an ImportError naming them.
__getattr__ = module_getattr(__name__, globals())
