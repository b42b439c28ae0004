"""``airflow.sdk.definitions.decorators``: ``task`` and its variants."""

from updraft.sdk._internal.unsupported import module_getattr
from updraft.sdk.decorators import setup, task, task_group, teardown

__all__ = ["setup", "task", "task_group", "teardown"]

# Names Airflow has here that Updraft does not support raise an ImportError naming them.
__getattr__ = module_getattr(__name__, globals())
