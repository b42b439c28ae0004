"""Import circles that were broken stay broken: the graph of ``shared/updraft``'s imports, read with ``ast``.

Every import counts, a function's deferred one too (it still ties the two modules together); only imports under
``if TYPE_CHECKING:`` do not. A cycle is a strongly connected component of that graph.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests import package_source
from tests.package_source import PACKAGE


def _modules() -> dict[str, tuple[Path, bool]]:
    """Each module's dotted name -> (its file, whether it is a package's ``__init__``)."""
    modules = {}
    for path in package_source.modules():
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def _imports(tree: ast.AST) -> Iterable[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        else:
            yield from _imports(node)


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ``updraft`` it imports (``from a import b`` is ``a.b`` when that is a module)."""
    modules = _modules()

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        targets: set[str] = set()
        for node in _imports(package_source.tree(path)):
            if isinstance(node, ast.Import):
                targets.update(filter(None, (known(alias.name) for alias in node.names)))
                continue
            base = node.module or ""
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            targets.update(filter(None, (known(f"{base}.{alias.name}") for alias in node.names)))
        targets.discard(name)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root, targets in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(targets)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def by_package(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same graph with each module folded into its top package (``updraft.sdk.dag`` -> ``updraft.sdk``)."""
    def top(name: str) -> str:
        return ".".join(name.split(".")[:2])

    folded: dict[str, set[str]] = {}
    for name, targets in graph.items():
        folded.setdefault(top(name), set()).update(top(t) for t in targets)
    for name, targets in folded.items():
        targets.discard(name)
    return folded


def test_cycles_finds_a_circle_and_only_it():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [{"a", "b", "c"}]


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


@pytest.mark.slow
def test_the_graph_sees_deferred_imports(graph):
    assert "updraft.parsing.isolation" in graph["updraft.parsing.s3"]  # imported inside parse_s3_dag_file


def test_the_sdk_and_the_operators_do_not_import_the_task_runtime(graph):
    """The runtime imports the SDK and the operators to run a try; they reach it only through the context
    (``updraft.sdk.execution``), so the three packages are no circle even counted package by package."""
    authoring = {"updraft.sdk", "updraft.operators", "updraft.sensors"}
    circle = [c for c in cycles(by_package(graph)) if "updraft.runtime" in c and c & authoring]
    assert circle == []


def test_the_parser_modules_form_no_circle(graph):
    """isolation (the parser pool) and forkserver (its child) share the job records and wire protocol through a
    third module instead of each importing the other's private names."""
    assert [c for c in cycles(graph) if any(m.startswith("updraft.parsing.") for m in c)] == []


def _reached(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_childs_look_at_a_trigger_loads_nothing_of_the_check_functions_side(graph):
    """The look runs in a child with the DAG-code role's credentials (``runtime.trigger_look``); the check function's
    half (``runtime.trigger_check``) and the supervisor that starts children are the parent's, and the runtime's
    modules form no circle."""
    assert _reached(graph, "updraft.runtime.trigger_look") & {"updraft.runtime.trigger_check",
                                                                "updraft.runtime.supervisor"} == set()
    assert [c for c in cycles(graph) if any(m.startswith("updraft.runtime.") for m in c)] == []
