"""FileSensor: waits for a file, or a folder holding at least one file, on the worker's filesystem.

Airflow's semantics: ``filepath`` (templated, a glob) is joined to the ``path`` extra of the ``fs_conn_id``
connection (``fs_default`` by default; an absolute ``filepath`` ignores it), and that connection must exist, as
Airflow's ``FSHook`` requires. Poke and reschedule mode poke in a worker; ``deferrable=True`` pokes once and then
defers to Airflow's ``FileTrigger``, which must be available to Updraft's triggers: until it is, the DAG file gets
an import error naming it, rather than a sensor that silently waits in the worker.
"""

from __future__ import annotations

import datetime
import importlib
import os
from functools import cached_property
from glob import glob
from typing import Any, ClassVar

from updraft.sdk.exceptions import AirflowException, TaskDeferred, UnsupportedFeatureError
from updraft.sensors.base import BaseSensorOperator

FILE_TRIGGER = "airflow.providers.standard.triggers.file.FileTrigger"
DEFERRAL_HINT = (f"{FILE_TRIGGER} is not available among Updraft's triggers yet (issue 16: deferrable waits on Step "
                 "Functions); leave deferrable=False to poke, or use mode='reschedule', which holds no worker "
                 "between pokes")


def file_trigger_class() -> type:
    """Airflow's FileTrigger, as the deferrable FileSensor defers to it; an import error naming it when absent."""
    module_name, _, name = FILE_TRIGGER.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), name)  # type: ignore[no-any-return]
    except (ImportError, AttributeError):
        raise UnsupportedFeatureError("FileSensor(deferrable=True)", DEFERRAL_HINT) from None


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
            file_trigger_class()  # refused now, at import, when it is missing
        if start_from_trigger:  # it starts the task in the triggerer: deferral too, never silently a poke
            raise UnsupportedFeatureError("FileSensor(start_from_trigger=True)", DEFERRAL_HINT)
        super().__init__(**kwargs)
        self.filepath = filepath
        self.fs_conn_id = fs_conn_id
        self.recursive = recursive
        self.deferrable = deferrable
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

    def execute(self, context: Any) -> None:
        """Airflow's: poke (or reschedule) until found; deferrable, one poke and then a wait on the FileTrigger."""
        if not self.deferrable:
            super().execute(context)
        elif not self.poke(context):
            # What BaseOperator.defer raises.
            raise TaskDeferred(trigger=file_trigger_class()(filepath=self.path, recursive=self.recursive,
                                                            poke_interval=self.poke_interval),
                               method_name="execute_complete", timeout=datetime.timedelta(seconds=self.timeout))

    def execute_complete(self, context: Any, event: bool | None = None) -> None:
        if not event:
            raise AirflowException(f"{self.task_id} task failed as {self.filepath} not found.")
        self.log.info("%s completed successfully as %s found.", self.task_id, self.filepath)
