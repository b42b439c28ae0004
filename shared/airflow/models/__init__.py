"""``airflow.models`` (Airflow 2 path): the authoring classes DAG files import from it, loaded lazily.

Of the database models Airflow also keeps here, ``DagRun``, ``TaskInstance`` and ``TaskReschedule`` import and raise
when used (provider modules import them for paths Updraft never takes); the others (XCom, Pool, ...) raise an
ImportError explaining that DAG files cannot query Updraft's store.
"""

from updraft.sdk._internal.unsupported import module_dir, module_getattr

_LAZY = {
    "DAG": "updraft.sdk.dag",
    "BaseOperator": "updraft.sdk.baseoperator",
    "MappedOperator": "updraft.sdk.mappedoperator",
    "Connection": "updraft.sdk.connection",
    "Variable": "updraft.sdk.variable",
    "Param": "updraft.sdk.param",
    "ParamsDict": "updraft.sdk.param",
    "XComArg": "updraft.sdk.xcom_arg",
    "BaseOperatorLink": "updraft.sdk.operator_link",
    "DagRun": "airflow.models.dagrun",
    "TaskInstance": "airflow.models.taskinstance",
    "clear_task_instances": "airflow.models.taskinstance",
    "TaskReschedule": "airflow.models.taskreschedule",
}

__all__ = list(_LAZY)

__getattr__ = module_getattr(__name__, globals(), _LAZY)
__dir__ = module_dir(globals(), _LAZY)
