"""The store stores: it imports nothing from the layers above it (scheduling decides, parsing parses)."""

from __future__ import annotations

import ast
from pathlib import Path

import updraft.store

FORBIDDEN = ("updraft.scheduling", "updraft.parsing")
STORE = Path(updraft.store.__file__).parent


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_store_imports_nothing_from_scheduling_or_parsing():
    files = sorted(STORE.glob("*.py"))
    assert len(files) > 10
    offending = {f"{path.name}: {name}" for path in files for name in _imported(path)
                 if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)}
    assert offending == set()


def test_the_walk_sees_a_forbidden_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from updraft.scheduling.run_creation import next_run_info\n")
    assert "updraft.scheduling.run_creation" in _imported(sample)
