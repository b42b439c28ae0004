"""``airflow.sdk.execution_time.context``: the accessors a running task finds in its context.

DAG files import ``NEVER_EXPIRE`` from here (the task state store's ``retention``); the accessor classes are
here for ``isinstance`` checks and type hints, as in Airflow. Names load on first use.
"""

from updraft.sdk._internal.unsupported import module_dir, module_getattr

_LAZY = {
    "NEVER_EXPIRE": "updraft.runtime.state_stores",
    "TaskStateStoreAccessor": "updraft.runtime.state_stores",
    "AssetStateStoreAccessor": "updraft.runtime.state_stores",
    "AssetStateStoreAccessors": "updraft.runtime.state_stores",
    "OutletEventAccessor": "updraft.runtime.assets",
    "OutletEventAccessors": "updraft.runtime.assets",
    "InletEventsAccessor": "updraft.runtime.assets",
    "InletEventsAccessors": "updraft.runtime.assets",
    "TriggeringAssetEventsAccessor": "updraft.runtime.assets",
    "VariableAccessor": "updraft.runtime.context",
    "ConnectionAccessor": "updraft.runtime.context",
    "set_current_context": "updraft.sdk.context",
}

__all__ = list(_LAZY)

__getattr__ = module_getattr(__name__, globals(), _LAZY)
__dir__ = module_dir(globals(), _LAZY)
