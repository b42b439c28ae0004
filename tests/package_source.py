"""The source of ``shared/updraft`` as the static checks read it: every module's text and syntax tree, read and
parsed once per test process.

The layering, import-graph, lazy-import, one-home and state-home checks each walk the whole package (500 modules);
parsing it costs a second or more of CPU each time, so they share one parse. The trees are read-only to their users:
a check that wants to add an import or a node builds its own copy.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "shared" / "updraft"


@functools.cache
def modules() -> tuple[Path, ...]:
    """Every ``.py`` file of the package, sorted."""
    return tuple(sorted(PACKAGE.rglob("*.py")))


@functools.cache
def source(path: Path) -> str:
    """``path``'s text (the same string object each time, so :func:`parse` finds it again at once)."""
    return path.read_text()


@functools.cache
def parse(text: str) -> ast.Module:
    """``ast.parse(text)``, once per distinct text."""
    return ast.parse(text)


def tree(path: Path) -> ast.Module:
    """``path``'s syntax tree."""
    return parse(source(path))


@functools.cache
def walk(node: ast.AST) -> tuple[ast.AST, ...]:
    """``ast.walk(node)`` as a tuple, walked once per tree: the checks go over the whole package several times, and
    ``ast.walk`` costs more than the parse."""
    return tuple(ast.walk(node))
