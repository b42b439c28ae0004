"""MWAA's ``plugins.zip``: an archive that stands for the plugins folder.

Unpacked once per content into the requirements cache (``plugins/<sha256>``) and used exactly as a plugins folder
(``updraft.plugins``). Entries that would land outside that folder (absolute paths, ``..``) or are links are refused
with their names: the archive is the user's, but it must not write anywhere else.
"""

from __future__ import annotations

import hashlib
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from updraft.requirements.install import default_cache
from updraft.requirements.lines import RequirementsError


def unpack(archive: Path, cache: Path | None = None) -> Path:
    """The folder holding ``archive``'s files (unpacked now unless the cache has this content)."""
    data = archive.read_bytes()
    folder = (cache or default_cache()) / "plugins" / hashlib.sha256(data).hexdigest()[:32]
    if folder.is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".unpack-", dir=folder.parent))
    try:
        try:
            with zipfile.ZipFile(archive) as opened:
                _check(archive, opened)
                opened.extractall(work)
        except zipfile.BadZipFile as exc:
            raise RequirementsError(f"{archive} is not a zip archive: {exc}") from None
        try:
            work.rename(folder)
        except OSError:
            if not folder.is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


def _check(archive: Path, opened: zipfile.ZipFile) -> None:
    for info in opened.infolist():
        path = PurePosixPath(info.filename)
        if path.is_absolute() or ".." in path.parts or "\\" in info.filename:
            raise RequirementsError(f"{archive}: the entry {info.filename!r} would be written outside the plugins "
                                    "folder")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise RequirementsError(f"{archive}: the entry {info.filename!r} is a symbolic link")
