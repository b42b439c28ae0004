"""An ``updraft`` import inside a function says why it is deferred: a ``# lazy:`` comment on its line, on the line
above it, or above the first of a run of consecutive deferred imports (cold start, an import circle inside one
layer, a child process that imports only what it runs, a module a test patches).

Everything else imports at the module's top, where the layering test (``test_layers.py``) sees it as the
module's dependency. Imports of the standard library and third parties inside functions are not counted."""

from __future__ import annotations

import ast

from tests import package_source
from tests.package_source import PACKAGE

TAG = "# lazy:"


def _internal(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return bool(node.level) or (node.module or "").split(".")[0] == "updraft"
    return any(alias.name.split(".")[0] == "updraft" for alias in node.names)


def _inside_functions(tree: ast.AST) -> list[ast.AST]:
    """Every node of a function's (the function's own included), each once although functions nest."""
    inside: list[ast.AST] = []
    outside = [tree]
    while outside:
        node = outside.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inside.extend(ast.walk(node))
        else:
            outside.extend(ast.iter_child_nodes(node))
    return inside


def unexplained(source: str) -> list[int]:
    """Lines of deferred ``updraft`` imports in ``source`` without their ``# lazy:`` reason."""
    lines = source.splitlines()
    found: set[int] = set()
    for block in _inside_functions(package_source.parse(source)):
        for body in (getattr(block, name, None) for name in ("body", "orelse", "finalbody")):
            if not isinstance(body, list):
                continue
            tagged = previous_was_import = False
            for statement in body:
                if not isinstance(statement, ast.Import | ast.ImportFrom):
                    tagged = previous_was_import = False
                    continue
                own = TAG in lines[statement.lineno - 1] or TAG in lines[statement.end_lineno - 1]  # type: ignore[index]
                above = statement.lineno >= 2 and lines[statement.lineno - 2].strip().startswith(TAG)
                tagged = own or above or (previous_was_import and tagged)
                previous_was_import = True
                if _internal(statement) and not tagged:
                    found.add(statement.lineno)
    return sorted(found)


def test_every_deferred_updraft_import_says_why() -> None:
    missing = [f"{path.relative_to(PACKAGE.parent)}:{line}" for path in package_source.modules()
               for line in unexplained(package_source.source(path))]
    assert missing == [], f"deferred imports without a '{TAG} <reason>' comment: {missing}"


def test_the_check_sees_a_bare_deferred_import_and_accepts_the_tagged_forms() -> None:
    source = '''
import os


def f():
    import json
    from updraft.model import states
    return states, json


def g():
    # lazy: cold start (the scheduler only on this path)
    from updraft.scheduling import scheduler
    from updraft.store import keys
    x = 1
    from updraft.model import records  # lazy: tests patch this module
    y = 2
    from . import sibling
    return scheduler, keys, x, records, y, sibling
'''
    assert unexplained(source) == [7, 18]
