"""FileSensor: waits for a file, or a folder holding at least one file, on the worker's filesystem.

Airflow's semantics: ``filepath`` (templated, a glob) is joined to the ``path`` extra of the ``fs_conn_id``
connection (``fs_default`` by default; an absolute ``filepath`` ignores it), and that connection must exist, as
Airflow's ``FSHook`` requires. Poke and reschedule mode poke in a worker; ``deferrable=True`` pokes once and then
defers to Airflow's ``FileTrigger``, a polling trigger the deferral state machine's check function looks at
(``updraft.runtime.trigger_check``). ``start_from_trigger`` is an import error naming it.
"""

from __future__ import annotations

import datetime
import os
from functools import cached_property
from glob import glob
from typing import Any, ClassVar

from updraft.sdk.exceptions import AirflowException, TaskDeferred, UnsupportedFeatureError
from updraft.sensors.base import BaseSensorOperator
from updraft.triggers.file import FileTrigger

START_HINT = ("Updraft starts a task from its trigger for the time triggers only; use "
              "deferrable=True, which pokes once and then waits on the FileTrigger")


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
        if start_from_trigger:  # it starts the task in the triggerer: never silently a poke
            raise UnsupportedFeatureError("FileSensor(start_from_trigger=True)", START_HINT)
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
        # lazy: the task child only (the connection when the path is read)
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
            raise TaskDeferred(trigger=FileTrigger(filepath=self.path, recursive=self.recursive,
                                                   poke_interval=self.poke_interval),
                               method_name="execute_complete", timeout=datetime.timedelta(seconds=self.timeout))

    def execute_complete(self, context: Any, event: bool | None = None) -> None:
        if not event:
            raise AirflowException(f"{self.task_id} task failed as {self.filepath} not found.")
        self.log.info("%s completed successfully as %s found.", self.task_id, self.filepath)
