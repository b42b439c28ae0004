"""Airflow's hook lineage names (``airflow.sdk.lineage``): hooks report the assets they read and wrote.

Airflow collects them only when a plugin registers a hook lineage reader (OpenLineage); otherwise
``get_hook_lineage_collector()`` is a ``NoOpCollector`` that drops what hooks report. Updraft has no lineage readers
(OpenLineage is not supported), so it always is: a hook's ``add_input_asset``/``add_output_asset`` calls succeed
and record nothing, exactly as in an Airflow deployment without OpenLineage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.sdk.logging_mixin import LoggingMixin


@dataclass
class AssetLineageInfo:
    asset: Any
    count: int
    context: Any


@dataclass
class HookLineage:
    inputs: list[AssetLineageInfo] = field(default_factory=list)
    outputs: list[AssetLineageInfo] = field(default_factory=list)
    extra: list[Any] = field(default_factory=list)


class HookLineageCollector(LoggingMixin):
    """Airflow's collector; Updraft builds only the no-op one (module doc)."""

    def __init__(self, **kwargs: Any) -> None:
        raise UnsupportedFeatureError("HookLineageCollector", "hook lineage is collected only for OpenLineage, "
                                      "which Updraft does not support")


class NoOpCollector(HookLineageCollector):
    """Accepts what hooks report and keeps nothing (Airflow's collector when no lineage reader is installed)."""

    def __init__(self, **kwargs: Any) -> None:
        LoggingMixin.__init__(self)
        # Airflow's collector keeps extras here; common-compat checks it is there before it treats the collector
        # as Airflow 3.2+'s (else it patches it as Airflow 2's, through airflow.lineage.hook).
        self._extra: dict[str, Any] = {}

    def create_asset(self, *, scheme: str | None = None, uri: str | None = None, name: str | None = None,
                     group: str | None = None, asset_kwargs: dict[str, Any] | None = None,
                     asset_extra: dict[str, Any] | None = None) -> Any:
        """The asset a hook describes, by URI or name as Airflow's does; by scheme alone Airflow asks the asset
        factories of the providers' URI handlers, which Updraft does not load: None, as Airflow answers a scheme
        without a factory."""
        if not (uri or name):
            return None
        # lazy: import cost (assets only when lineage names one)
        from updraft.sdk.assets import Asset

        kwargs: dict[str, Any] = {key: value for key, value in (("uri", uri), ("name", name), ("group", group),
                                                                 ("extra", asset_extra)) if value}
        return Asset(**kwargs)

    def add_input_asset(self, *args: Any, **kwargs: Any) -> None:
        return None

    def add_output_asset(self, *args: Any, **kwargs: Any) -> None:
        return None

    def add_extra(self, *args: Any, **kwargs: Any) -> None:
        return None

    @property
    def collected_assets(self) -> HookLineage:
        return HookLineage()

    @property
    def has_collected(self) -> bool:
        return False


class HookLineageReader(LoggingMixin):
    def __init__(self, **kwargs: Any) -> None:
        raise UnsupportedFeatureError("HookLineageReader", "hook lineage readers (OpenLineage) are not supported")


def get_hook_lineage_collector() -> HookLineageCollector:
    """The process's collector: a NoOpCollector (module doc)."""
    return NoOpCollector()
