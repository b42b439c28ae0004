"""Scheduling's faces as a tested contract: code outside ``updraft.scheduling`` imports only its three faces
(``updraft.scheduling``, ``.decisions``, ``.commands``), each face's table, ``__all__`` and type-checking imports
name the same things, and inside scheduling the order decisions < the pass < commands holds.

Tests may import scheduling's modules directly; the package's own code and the Lambda handlers may not.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from tests import package_source
from tests.package_source import PACKAGE
from tests.unit.test_import_graph import import_graph

FACES = ("updraft.scheduling", "updraft.scheduling.decisions", "updraft.scheduling.commands")
HANDLERS = PACKAGE.parents[1] / "functions"

# Decisions that read a pure helper living with the pass (docs/decisions/0028-scheduling-faces.md).
DECISIONS_FROM_PASS = {
    ("updraft.scheduling.decisions.evaluation", "updraft.scheduling.counted_ends"),
    ("updraft.scheduling.decisions.backstops", "updraft.scheduling.deferrals"),
}


def _inside(module: str) -> bool:
    return module == "updraft.scheduling" or module.startswith("updraft.scheduling.")


def behind_faces(graph: dict[str, set[str]]) -> list[str]:
    """Every import, from a module outside scheduling, of a scheduling module that is not a face."""
    return [f"{module} -> {target}" for module, targets in sorted(graph.items()) if not _inside(module)
            for target in sorted(targets)
            if _inside(target) and target not in FACES]


def _handler_imports() -> dict[str, set[str]]:
    """The Lambda handlers' imports of ``updraft`` (modules and ``from`` bases, as written)."""
    found: dict[str, set[str]] = {}
    for path in sorted(HANDLERS.rglob("*.py")):
        names = found.setdefault(str(path.relative_to(HANDLERS.parent)), set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.update(f"{node.module}.{alias.name}" if node.module == "updraft.scheduling"
                             and (PACKAGE / "scheduling" / alias.name).with_suffix(".py").exists()
                             else node.module for alias in node.names)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_code_outside_scheduling_imports_only_its_faces(graph):
    assert behind_faces(graph) == []


def test_handlers_import_only_the_faces():
    assert {f"{handler} -> {name}" for handler, names in _handler_imports().items() for name in names
            if _inside(name) and name not in FACES} == set()


def test_an_import_behind_a_face_fails(graph):
    """The check sees what a newcomer would add: a route importing the claims module, or a submodule by name."""
    added = {module: set(targets) for module, targets in graph.items()}
    added["updraft.api.routes.dags"].add("updraft.scheduling.claims")
    added["updraft.runtime.worker"].add("updraft.scheduling.decisions.evaluation")
    assert behind_faces(added) == ["updraft.api.routes.dags -> updraft.scheduling.claims",
                                   "updraft.runtime.worker -> updraft.scheduling.decisions.evaluation"]


def _checked_names(face: str) -> dict[str, str]:
    """The face's ``if TYPE_CHECKING:`` imports: name -> its home as the face's table writes it."""
    path = PACKAGE.parent / Path(*face.split(".")) / "__init__.py"
    names = {}
    for node in package_source.walk(package_source.tree(path)):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for item in node.body:
                assert isinstance(item, ast.ImportFrom) and item.module
                for alias in item.names:
                    local = alias.asname or alias.name
                    names[local] = item.module if local == alias.name else f"{item.module}:{alias.name}"
    return names


@pytest.mark.parametrize("face", FACES)
def test_a_face_lists_each_name_once_with_its_home(face):
    module = importlib.import_module(face)
    assert sorted(module.__all__) == sorted(module._HOMES) == sorted(set(module.__all__))
    assert _checked_names(face) == module._HOMES
    for name, home in module._HOMES.items():
        source, _, attribute = home.partition(":")
        assert getattr(module, name) is getattr(importlib.import_module(source), attribute or name)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        module.not_a_name  # noqa: B018


@pytest.mark.parametrize("face", FACES)
def test_a_face_exports_no_submodule_name(face):
    """Once a submodule is imported its name on the package is the module, and the face would hand out that."""
    folder = PACKAGE.parent / Path(*face.split("."))
    submodules = {path.stem for path in folder.glob("*.py")} | {path.parent.name for path in folder.glob("*/__init__.py")}
    assert set(importlib.import_module(face).__all__) & submodules == set()


def test_importing_a_face_loads_none_of_its_modules():
    """Cold start: the parser imports the commands face to register a file, and must not load the pass."""
    code = ("import sys, updraft.scheduling.commands, updraft.scheduling.decisions\n"
            "print(sorted(m for m in sys.modules if m.startswith('updraft.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={"PYTHONPATH": str(PACKAGE.parent)}).stdout.strip()
    assert loaded == str(["updraft.scheduling", "updraft.scheduling.commands", "updraft.scheduling.decisions",
                          "updraft.scheduling.faces"])


def test_decisions_then_the_pass_then_commands(graph):
    """Decisions import neither the pass (but for two pure helpers) nor commands; the pass imports no command."""
    def kind(module: str) -> str:
        for sub in ("decisions", "commands"):
            if module.startswith(f"updraft.scheduling.{sub}"):
                return sub
        return "pass"

    upward = sorted((module, target) for module, targets in graph.items() if module.startswith("updraft.scheduling.")
                    for target in targets if target.startswith("updraft.scheduling.")
                    and target != "updraft.scheduling.faces"
                    and ("decisions", "pass", "commands").index(kind(target))
                    > ("decisions", "pass", "commands").index(kind(module)))
    assert [edge for edge in upward if edge not in DECISIONS_FROM_PASS] == []
    assert set(upward) >= DECISIONS_FROM_PASS, "a decision no longer reads the pass: shorten the list"
