"""The plugins folder as the latest parse loaded it: one item holding each plugin's info and each plugin file's
import error (:class:`updraft.model.parse_results.PluginsReport`), read by ``GET /plugins``.

Every parse of a DAG file loads the whole plugins folder in its child, so the latest parse's report is the
folder as it is now. The item is written only when the report differs from the stored one (a parse of an
unchanged folder costs one read, no write); two parses racing write the same report, or the newer folder's.
The item type is declared here, beside the code that owns it, and bound with :func:`updraft.store.models.bind`.
"""

from __future__ import annotations

import datetime as dt
import functools

from pynamodb.attributes import JSONAttribute

from updraft.model.parse_results import PluginsReport
from updraft.store.attributes import DateTimeAttribute
from updraft.store.base import StoreBase
from updraft.store.keys import PLUGINS_KEY
from updraft.store.models import Item, bind


class PluginsItem(Item):
    plugins = JSONAttribute()
    import_errors = JSONAttribute()
    recorded_at = DateTimeAttribute()


class PluginStore(StoreBase):
    @functools.cached_property
    def _plugins_model(self) -> type[PluginsItem]:
        return bind(PluginsItem, self.config)

    def record_plugins(self, report: PluginsReport, now: dt.datetime) -> bool:
        """Keep ``report`` unless it is what is stored already; True when it was written."""
        if self.get_plugins() == report:
            return False
        self._plugins_model(PLUGINS_KEY, PLUGINS_KEY, plugins=report.plugins, import_errors=report.import_errors,
                            recorded_at=now).save()
        return True

    def get_plugins(self) -> PluginsReport | None:
        """The latest report; None before any parse loaded the plugins folder."""
        model = self._plugins_model
        try:
            item = model.get(PLUGINS_KEY, PLUGINS_KEY, consistent_read=True)
        except model.DoesNotExist:
            return None
        return PluginsReport(plugins=list(item.plugins), import_errors=dict(item.import_errors))
