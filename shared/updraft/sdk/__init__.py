"""Updraft's authoring surface; DAG files reach it as ``airflow.sdk`` through the shim package.

Names load lazily so that importing the package costs only what a DAG file actually uses.
"""

from __future__ import annotations

from updraft.sdk._internal.unsupported import module_dir, module_getattr

_LAZY = {
    "DAG": "updraft.sdk.dag",
    "dag": "updraft.sdk.decorators",
    "task": "updraft.sdk.decorators",
    "task_group": "updraft.sdk.decorators",
    "setup": "updraft.sdk.decorators",
    "teardown": "updraft.sdk.decorators",
    "TaskGroup": "updraft.sdk.taskgroup",
    "BaseOperator": "updraft.sdk.baseoperator",
    "chain": "updraft.sdk.baseoperator",
    "chain_linear": "updraft.sdk.baseoperator",
    "cross_downstream": "updraft.sdk.baseoperator",
    "MappedOperator": "updraft.sdk.mappedoperator",
    "XComArg": "updraft.sdk.xcom_arg",
    "Param": "updraft.sdk.param",
    "ParamsDict": "updraft.sdk.param",
    "Label": "updraft.sdk.edges",
    "EdgeModifier": "updraft.sdk.edges",
    "Context": "updraft.sdk.context",
    "get_current_context": "updraft.sdk.context",
    "TriggerRule": "updraft.sdk.trigger_rule",
    "WeightRule": "updraft.sdk.trigger_rule",
}

__all__ = list(_LAZY)

__getattr__ = module_getattr(__name__, globals(), _LAZY)
__dir__ = module_dir(globals(), _LAZY)
