"""``airflow.decorators`` (Airflow 2 path): ``@task``, ``@dag``, ``@task_group``, ``@setup``, ``@teardown``."""

from updraft.sdk._internal.unsupported import module_getattr
from updraft.sdk.decorators import (
    dag,
    setup,
    task,
    task_group,
    teardown,
)

__all__ = ["dag", "setup", "task", "task_group", "teardown"]

# Names Airflow has here that Updraft does not support raise an ImportError naming them.
__getattr__ = module_getattr(__name__, globals())
