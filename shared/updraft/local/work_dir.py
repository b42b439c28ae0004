"""Local mode's working folder: where its parser and workers mirror the DAG files (``UPDRAFT_WORK_DIR``).

It is private to one running system: a folder made for this start (``mkdtemp``, mode 0700) inside the state dir,
or inside ``$UPDRAFT_HOME/work`` without one, so two local systems never share a mirror and a folder another
user made beforehand at some fixed path (``/tmp/updraft-dags``) cannot make parses fail or feed them files. The
folder is removed on stop; one left by a process that was killed is removed at the next start in the same place.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from updraft.local.endpoint import process_alive

PREFIX = "work-"


def private_dir(path: Path) -> Path:
    """``path`` made (with its parents) when missing, and only for this user (0700) when this user owns it."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.stat().st_uid == os.getuid():
        path.chmod(0o700)
    return path


def remove_stale(parent: Path) -> None:
    """Remove the working folders in ``parent`` that this user's processes left when killed (their pid is gone)."""
    for folder in parent.glob(f"{PREFIX}*-*"):
        pid = folder.name[len(PREFIX):].split("-", 1)[0]
        with contextlib.suppress(OSError):
            if pid.isdigit() and folder.lstat().st_uid == os.getuid() and not process_alive(int(pid)):
                shutil.rmtree(folder, ignore_errors=True)


def make_work_dir(state_dir: Path | None, updraft_home: Path) -> Path:
    """A new private working folder for this start: in ``state_dir`` when given, else in ``updraft_home/work``."""
    parent = private_dir(state_dir if state_dir is not None else updraft_home / "work")
    remove_stale(parent)
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))
