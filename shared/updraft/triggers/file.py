"""``airflow.providers.standard.triggers.file.FileTrigger``: fires once a file, or a folder holding a file, matches
``filepath`` (a glob), as Airflow's. A polling trigger: the check function calls ``poll_once`` per look
(``updraft.runtime.trigger_check``), on the check function's filesystem view (on AWS, the function's own disk or an
EFS mount both see; locally, the machine's)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from glob import glob
from typing import Any

from updraft.triggers.base import BaseTrigger, TriggerEvent

CLASSPATH = "airflow.providers.standard.triggers.file.FileTrigger"


def found(filepath: str, *, recursive: bool) -> bool:
    """Whether ``filepath`` matches a file, or a directory with a file anywhere below it."""
    for path in glob(filepath, recursive=recursive):
        if os.path.isfile(path):
            return True
        if any(files for _, _, files in os.walk(path)):
            return True
    return False


class FileTrigger(BaseTrigger):
    def __init__(self, filepath: str, recursive: bool = False, poke_interval: float = 5.0, **kwargs: Any) -> None:
        super().__init__()
        self.filepath = filepath
        self.recursive = recursive
        self.poke_interval = poke_interval

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return CLASSPATH, {"filepath": self.filepath, "recursive": self.recursive,
                           "poke_interval": self.poke_interval}

    def poll_once(self, runs: object = None) -> TriggerEvent | None:
        """The check function's one look, without ``run()``'s sleep between looks (``runs`` is unused: the
        cross-DAG triggers' signature)."""
        return TriggerEvent(True) if found(self.filepath, recursive=self.recursive) else None

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            if found(self.filepath, recursive=self.recursive):
                self.log.info("Found File %s", self.filepath)
                yield TriggerEvent(True)
                return
            await asyncio.sleep(self.poke_interval)
