"""The UI's static files: their content types, and a version (a digest of every file) that keys their URLs.

Read lazily and kept for the process's life: the API Lambda only pays for reading them when a browser asks,
and never for importing anything beyond the standard library.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

STATIC = Path(__file__).parent / "static"
SHELL = "shell.html"  # the app shell: every UI path answers it, with the version filled in
ENTRY = "app.js"  # the shell's one script; the modules it imports statically are preloaded beside it
# A static import's module (`import { a } from "./x.js";`, `import "./x.js";`); `import("./x.js")` loads on demand.
_STATIC_IMPORT = re.compile(r'^import\s(?:[^"\'();]*?\sfrom\s)?["\']\./([\w.-]+\.js)["\'];?', re.MULTILINE)
CONTENT_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
                 ".svg": "image/svg+xml", ".html": "text/html; charset=utf-8", ".txt": "text/plain; charset=utf-8"}


def content_type(name: str) -> str | None:
    """The type of a servable asset by its suffix; None for anything else (not served)."""
    return CONTENT_TYPES.get(Path(name).suffix)


@functools.cache
def _files() -> dict[str, str]:
    """Every asset by name (the folder is flat: an asset URL has one segment after the version)."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(STATIC.iterdir())
            if p.is_file() and content_type(p.name) is not None}


@functools.cache
def version() -> str:
    """A digest of every asset: a new release gets new asset URLs, so browsers may cache each one forever."""
    digest = hashlib.sha256()
    for name, text in _files().items():
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    return digest.hexdigest()[:12]


def asset(name: str) -> str | None:
    """The text of one asset; None when there is no such file."""
    return _files().get(name)


@functools.cache
def preloaded() -> tuple[str, ...]:
    """Every module the entry imports statically, directly or through others (not the entry, not on-demand ones).

    The shell names them all as ``modulepreload`` links, so a cold browser fetches them at once rather than level
    by level as each module's imports are found (three round trips deep)."""
    found: list[str] = []
    todo = [ENTRY]
    while todo:
        for name in _STATIC_IMPORT.findall(_files()[todo.pop()]):
            if name != ENTRY and name not in found:
                found.append(name)
                todo.append(name)
    return tuple(sorted(found))


def shell(base: str) -> str:
    """The app shell for a page whose path is ``base`` levels deep: asset URLs are relative to the page, so the
    same HTML works at the root of local mode's address and under API Gateway's stage prefix (``/prod/...``)."""
    links = "\n".join(f'<link rel="modulepreload" href="{{{{base}}}}/static/{{{{version}}}}/{name}">'
                      for name in preloaded())
    return _files()[SHELL].replace("{{preload}}", links).replace("{{base}}", base).replace("{{version}}", version())
