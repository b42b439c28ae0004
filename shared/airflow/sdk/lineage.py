"""``airflow.sdk.lineage``: hook lineage, collected by nothing (Updraft has no OpenLineage)."""

from updraft.sdk.lineage import (
    AssetLineageInfo,
    HookLineage,
    HookLineageCollector,
    HookLineageReader,
    NoOpCollector,
    get_hook_lineage_collector,
)

__all__ = ["AssetLineageInfo", "HookLineage", "HookLineageCollector", "HookLineageReader", "NoOpCollector",
           "get_hook_lineage_collector"]
