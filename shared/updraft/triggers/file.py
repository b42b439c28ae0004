"""``airflow.providers.standard.triggers.file``, as Airflow's: ``FileTrigger`` fires once a file, or a folder holding
a file, matches ``filepath`` (a glob); ``FileDeleteTrigger`` and ``DirectoryFileDeleteTrigger`` fire once their file
exists, and delete it (the triggers of asset watchers on files: ``updraft.scheduling.asset_watchers``).

All three are polling triggers: the check function calls ``poll_once`` per look (``updraft.runtime.trigger_check``,
``updraft.runtime.asset_watch``), on the check function's filesystem view (on AWS, the function's own disk or an EFS
mount both see; locally, the machine's)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from glob import glob
from typing import Any

from updraft.triggers.base import BaseEventTrigger, BaseTrigger, TriggerEvent

CLASSPATH = "airflow.providers.standard.triggers.file.FileTrigger"
DELETE_CLASSPATH = "airflow.providers.standard.triggers.file.FileDeleteTrigger"
DIRECTORY_DELETE_CLASSPATH = "airflow.providers.standard.triggers.file.DirectoryFileDeleteTrigger"


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


def take(path: str) -> bool:
    """Delete the file at ``path`` if it is one: whether this look took it (a sibling, or a duplicate look, that
    deleted it first leaves nothing to take)."""
    try:
        if not os.path.isfile(path):
            return False
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


class FileDeleteTrigger(BaseEventTrigger):
    """Fires once the file ``filepath`` exists, after deleting it (Airflow's, for an ``AssetWatcher``: each file
    that appears is one event). A polling trigger: one look per check (``poll_once``)."""

    def __init__(self, filepath: str, poke_interval: float = 5.0, **kwargs: Any) -> None:
        super().__init__()
        self.filepath = filepath
        self.poke_interval = poke_interval

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return DELETE_CLASSPATH, {"filepath": self.filepath, "poke_interval": self.poke_interval}

    def poll_once(self, runs: object = None) -> TriggerEvent | None:
        if not take(self.filepath):
            return None
        self.log.info("File %s has been deleted", self.filepath)
        return TriggerEvent(True)

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while (event := self.poll_once()) is None:
            await asyncio.sleep(self.poke_interval)
        yield event


class DirectoryFileDeleteTrigger(BaseEventTrigger):
    """Fires once ``filename`` appears in ``directory``, after deleting it, with ``{"filepath": ...}`` (Airflow's).
    Airflow's triggerer shares one directory listing among the triggers of one directory and interval; here each
    look is one ``stat`` of the trigger's own file, which costs no more than the listing."""

    def __init__(self, *, directory: str, filename: str, poke_interval: float = 5.0) -> None:
        super().__init__()
        self.directory = directory
        self.filename = filename
        self.poke_interval = poke_interval

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return DIRECTORY_DELETE_CLASSPATH, {"directory": self.directory, "filename": self.filename,
                                            "poke_interval": self.poke_interval}

    def shared_stream_key(self) -> tuple[str, str, float]:
        """Airflow's key of the scan this trigger shares (kept for its interface)."""
        return ("directory-scan", os.path.realpath(self.directory), self.poke_interval)

    def poll_once(self, runs: object = None) -> TriggerEvent | None:
        filepath = os.path.join(self.directory, self.filename)
        if not take(filepath):
            return None
        self.log.info("File %s has been deleted", filepath)
        return TriggerEvent({"filepath": filepath})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while (event := self.poll_once()) is None:
            await asyncio.sleep(self.poke_interval)
        yield event
