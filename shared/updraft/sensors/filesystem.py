"""FileSensor: waits for a file, or a folder holding at least one file, on the worker's filesystem.

Airflow's semantics: ``filepath`` (templated, a glob) is joined to the ``path`` extra of the ``fs_conn_id``
connection (``fs_default`` by default; an absolute ``filepath`` ignores it), and that connection must exist, as
Airflow's ``FSHook`` requires. Only poke (and reschedule) mode: ``deferrable=True`` is refused until deferrable
waits run on Step Functions (issue 16), rather than silently waiting in the worker.
"""

from __future__ import annotations

import datetime
import os
from functools import cached_property
from glob import glob
from typing import Any, ClassVar

from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.sensors.base import BaseSensorOperator

DEFERRAL_HINT = ("deferrable sensors other than the time sensors are not implemented yet (issue 16: deferrable "
                 "waits on Step Functions); leave deferrable=False to poke, or use mode='reschedule'")


class FileSensor(BaseSensorOperator):
    """Done when ``filepath`` matches a file, or a directory with a file anywhere below it."""

    template_fields: ClassVar[tuple[str, ...]] = ("filepath", "fs_conn_id")
    ui_color: ClassVar[str] = "#91818a"

    def __init__(
        self,
        *,
        filepath: str,
        fs_conn_id: str = "fs_default",
        recursive: bool = False,
        deferrable: bool = False,
        start_from_trigger: bool = False,
        trigger_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if deferrable:
            raise UnsupportedFeatureError("FileSensor(deferrable=True)", DEFERRAL_HINT)
        if start_from_trigger:  # it starts the task in the triggerer: deferral too, never silently a poke
            raise UnsupportedFeatureError("FileSensor(start_from_trigger=True)", DEFERRAL_HINT)
        super().__init__(**kwargs)
        self.filepath = filepath
        self.fs_conn_id = fs_conn_id
        self.recursive = recursive
        self.start_from_trigger = start_from_trigger
        self.trigger_kwargs = trigger_kwargs

    @cached_property
    def path(self) -> str:
        """The connection's base path joined with the rendered ``filepath`` (read on the first poke)."""
        from updraft.sdk.connection import Connection

        basepath = Connection.get(self.fs_conn_id).extra_dejson.get("path", "")
        return os.path.join(basepath, self.filepath)

    def poke(self, context: Any) -> bool:
        self.log.info("Poking for file %s", self.path)
        for path in glob(self.path, recursive=self.recursive):
            if os.path.isfile(path):
                mod_time = datetime.datetime.fromtimestamp(os.path.getmtime(path)).strftime("%Y%m%d%H%M%S")
                self.log.info("Found File %s last modified: %s", path, mod_time)
                return True
            for _, _, files in os.walk(path):
                if files:
                    return True
        return False
