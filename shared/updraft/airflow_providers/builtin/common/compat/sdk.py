"""``airflow.providers.common.compat.sdk``: the common-compat provider's one-stop re-export of Airflow 3's SDK.

Many examples and providers import their base classes, exceptions and helpers from here. Each name the
provider (1.23, shipped with Airflow 3.3) exports resolves lazily to Updraft's implementation; the names
Updraft does not implement are listed in ``updraft.sdk._internal.unsupported`` and raise an ImportError naming
them, so nothing resolves to a silent stand-in.
"""

from airflow.sdk import timezone
from updraft.sdk._internal.unsupported import module_dir, module_getattr

_LAZY = {
    **{name: "airflow.sdk" for name in (
        "Asset", "AssetAlias", "AssetAll", "AssetAny", "BaseOperator", "BaseSensorOperator", "Connection",
        "Context", "DAG", "EdgeModifier", "Label", "Metadata", "Param", "PokeReturnValue", "TaskGroup",
        "TriggerRule", "Variable", "WeightRule", "XComArg", "chain", "chain_linear", "cross_downstream", "dag",
        "get_current_context", "get_parsing_context", "task", "task_group", "setup", "teardown",
        "BaseBranchOperator", "BranchMixIn", "BaseNotifier", "ObjectStoragePath",
    )},
    **{name: "airflow.sdk.exceptions" for name in (
        "AirflowConfigException", "AirflowException", "AirflowFailException", "AirflowNotFoundException",
        "AirflowOptionalProviderFeatureException", "AirflowSensorTimeout", "AirflowSkipException",
        "AirflowTaskTimeout", "ParamValidationError", "TaskDeferred", "XComNotFound",
    )},
    **{name: "updraft.sdk.retry_policy" for name in (
        "ChainRetryPolicy", "ExceptionRetryPolicy", "RetryAction", "RetryDecision", "RetryPolicy", "RetryRule",
    )},
    "AirflowPlugin": "airflow.plugins_manager",
    "MappedOperator": "airflow.sdk.definitions.mappedoperator",
    "poke_mode_only": "airflow.sdk.bases.sensor",
    "context_merge": "updraft.sdk.context",
    "XCOM_RETURN_KEY": "updraft.sdk.xcom_arg",
    "DecoratedOperator": "updraft.sdk.decorators.base",
    "get_unique_task_id": "updraft.sdk.decorators.base",
    "determine_kwargs": "updraft.sdk.execution",
    "BaseHook": "updraft.sdk.hooks",
    "BaseOperatorLink": "updraft.sdk.operator_link",
    "SkipMixin": "updraft.sdk.skipmixin",
    "conf": "updraft.sdk.configuration",
    "DagRunState": "updraft.model.states",
    "TaskInstanceState": "updraft.model.states",
    "XCom": "updraft.sdk.xcom",
    "TaskInstanceKey": "updraft.sdk.ti_key",
    "Stats": "updraft.sdk.stats",
    "TaskDecorator": "updraft.sdk.decorators.base",
    "task_decorator_factory": "updraft.sdk.decorators.base",
    "KeywordParameters": "updraft.sdk.execution",
    "SET_DURING_EXECUTION": "updraft.sdk.notset",
    **{name: "updraft.sdk.lineage" for name in (
        "HookLineage", "HookLineageCollector", "HookLineageReader", "NoOpCollector", "get_hook_lineage_collector",
        "AssetLineageInfo",
    )},
    "mask_secret": "updraft.secrets.masker",
    "redact": "updraft.secrets.masker",
}

__all__ = ["timezone"]
__all__ += list(_LAZY)

__getattr__ = module_getattr(__name__, globals(), _LAZY)
__dir__ = module_dir(globals(), _LAZY)
