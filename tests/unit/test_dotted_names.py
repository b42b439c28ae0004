"""Every ``updraft.…`` dotted name written in prose (the package's and the handlers' docstrings and comments, the
README, the decision records) names a module or an attribute that exists: a move or a rename that leaves a
docstring pointing at the old home fails here, as an import would."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOTTED = re.compile(r"updraft(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
# Names that are not Python: the EventBridge detail-type and source a worker's task-finished event carries.
NOT_PYTHON = {"updraft.task_finished": "an event's detail-type", "updraft.worker": "an event's source"}


def _prose_files() -> list[Path]:
    return sorted([*(ROOT / "shared" / "updraft").rglob("*.py"), *(ROOT / "functions").rglob("*.py"),
                   *(ROOT / "docs").rglob("*.md"), ROOT / "README.md"])


def _resolves(name: str) -> bool:
    """Whether the longest importable prefix of ``name`` has the rest as attributes."""
    parts = name.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def _named() -> dict[str, set[str]]:
    where: dict[str, set[str]] = {}
    for path in _prose_files():
        for match in DOTTED.finditer(path.read_text(encoding="utf-8")):
            where.setdefault(match.group(0), set()).add(str(path.relative_to(ROOT)))
    return where


@pytest.mark.slow  # imports every module a name points at
def test_every_dotted_name_in_prose_resolves() -> None:
    unresolved = {name: sorted(files) for name, files in _named().items()
                  if name not in NOT_PYTHON and not _resolves(name)}
    assert unresolved == {}


def test_the_names_that_are_not_python_are_still_written() -> None:
    """The exceptions only shrink: one no longer written anywhere is taken off the list."""
    assert set(NOT_PYTHON) <= set(_named())


@pytest.mark.parametrize("name", ["updraft.scheduling.clearing", "updraft.store.api.NoSuchThing"])
def test_a_name_that_moved_or_never_was_does_not_resolve(name: str) -> None:
    assert not _resolves(name)
