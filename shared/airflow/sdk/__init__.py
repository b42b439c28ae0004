"""``airflow.sdk``: Airflow 3's authoring surface, one import for everything a DAG file needs.

Like Airflow's own ``airflow.sdk``, names load on first use, so ``import airflow.sdk`` costs almost nothing and
``from airflow.sdk import DAG`` loads only the DAG model. Names Airflow 3 has here but Updraft does not support
(hooks, deadline alerts, ...) raise an ImportError that names them.
"""

from updraft.sdk._internal.unsupported import module_dir, module_getattr

# The Task SDK release that ships with Airflow 3.3.2.
__version__ = "1.3.2"

_LAZY = {
    "Asset": "updraft.sdk.assets",
    "AssetAccessControl": "updraft.sdk.assets",
    "AssetAlias": "updraft.sdk.assets",
    "AssetAll": "updraft.sdk.assets",
    "AssetAny": "updraft.sdk.assets",
    "AssetWatcher": "updraft.sdk.assets",
    "Metadata": "updraft.sdk.assets",
    "ObjectStoragePath": "updraft.sdk.io.path",
    "AssetOrTimeSchedule": "updraft.timetables.assets",
    "asset": "updraft.sdk.decorators.asset",
    "BaseOperator": "updraft.sdk.baseoperator",
    "chain": "updraft.sdk.baseoperator",
    "chain_linear": "updraft.sdk.baseoperator",
    "cross_downstream": "updraft.sdk.baseoperator",
    "BaseBranchOperator": "updraft.operators.branch",
    "BranchMixIn": "updraft.operators.branch",
    "BaseSensorOperator": "updraft.sensors.base",
    "BaseNotifier": "updraft.sdk.notifier",
    "PokeReturnValue": "updraft.sensors.base",
    "BaseHook": "updraft.sdk.hooks",
    "BaseOperatorLink": "updraft.sdk.operator_link",
    "BaseAsyncOperator": "updraft.sdk.async_operator",
    "SkipMixin": "updraft.sdk.skipmixin",
    "conf": "updraft.sdk.configuration",
    "DagRunState": "updraft.model.states",
    "TaskInstanceState": "updraft.model.states",
    "Connection": "updraft.sdk.connection",
    "Variable": "updraft.sdk.variable",
    "NEVER_EXPIRE": "updraft.runtime.state_stores",
    "Context": "updraft.sdk.context",
    "get_current_context": "updraft.sdk.context",
    "get_parsing_context": "updraft.sdk.parsing_context",
    "DAG": "updraft.sdk.dag",
    "dag": "updraft.sdk.decorators",
    "task": "updraft.sdk.decorators",
    "task_group": "updraft.sdk.decorators",
    "setup": "updraft.sdk.setup_teardown",
    "ExceptionRetryPolicy": "updraft.sdk.retry_policy",
    "RetryAction": "updraft.sdk.retry_policy",
    "RetryDecision": "updraft.sdk.retry_policy",
    "RetryPolicy": "updraft.sdk.retry_policy",
    "RetryRule": "updraft.sdk.retry_policy",
    "teardown": "updraft.sdk.setup_teardown",
    "EdgeModifier": "updraft.sdk.edges",
    "Label": "updraft.sdk.edges",
    "Param": "updraft.sdk.param",
    "ParamsDict": "updraft.sdk.param",
    "TaskGroup": "updraft.sdk.taskgroup",
    "XComArg": "updraft.sdk.xcom_arg",
    "TriggerRule": "updraft.sdk.trigger_rule",
    "WeightRule": "updraft.sdk.trigger_rule",
    "CronDataIntervalTimetable": "updraft.timetables.interval",
    "DeltaDataIntervalTimetable": "updraft.timetables.interval",
    "CronTriggerTimetable": "updraft.timetables.trigger",
    "DeltaTriggerTimetable": "updraft.timetables.trigger",
    "MultipleCronTriggerTimetable": "updraft.timetables.trigger",
    "EventsTimetable": "updraft.timetables.events",
    "PartitionMapper": "updraft.timetables.partitions.mappers",
    "RollupMapper": "updraft.timetables.partitions.mappers",
    "AllowedKeyMapper": "updraft.timetables.partitions.mappers",
    "ChainMapper": "updraft.timetables.partitions.mappers",
    "FixedKeyMapper": "updraft.timetables.partitions.mappers",
    "IdentityMapper": "updraft.timetables.partitions.mappers",
    "ProductMapper": "updraft.timetables.partitions.mappers",
    "FanOutMapper": "updraft.timetables.partitions.temporal",
    "StartOfDayMapper": "updraft.timetables.partitions.temporal",
    "StartOfHourMapper": "updraft.timetables.partitions.temporal",
    "StartOfMonthMapper": "updraft.timetables.partitions.temporal",
    "StartOfQuarterMapper": "updraft.timetables.partitions.temporal",
    "StartOfWeekMapper": "updraft.timetables.partitions.temporal",
    "StartOfYearMapper": "updraft.timetables.partitions.temporal",
    "MinimumCount": "updraft.timetables.partitions.wait_policies",
    "WaitForAll": "updraft.timetables.partitions.wait_policies",
    "Window": "updraft.timetables.partitions.windows",
    "DayWindow": "updraft.timetables.partitions.windows",
    "HourWindow": "updraft.timetables.partitions.windows",
    "MonthWindow": "updraft.timetables.partitions.windows",
    "QuarterWindow": "updraft.timetables.partitions.windows",
    "SegmentWindow": "updraft.timetables.partitions.windows",
    "WeekWindow": "updraft.timetables.partitions.windows",
    "YearWindow": "updraft.timetables.partitions.windows",
    "CronPartitionTimetable": "updraft.timetables.partitioned",
    "PartitionedAssetTimetable": "updraft.timetables.partitioned",
    "PartitionedAtRuntime": "updraft.timetables.partitioned",
}

__all__ = ["__version__"]
__all__ += list(_LAZY)

__getattr__ = module_getattr(__name__, globals(), _LAZY)
__dir__ = module_dir(globals(), _LAZY)
