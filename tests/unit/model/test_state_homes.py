"""Every grouping of task instance and DAG run states has one home, ``updraft/model/states.py``: read with ``ast``,
no other module of ``shared/updraft`` defines a set of state members, nor writes a state's name as a string where
it compares or collects states (the enums are ``str`` enums, so their members compare equal to those strings).

Caught: (a) a set literal, or a ``set()``/``frozenset()`` of a literal, holding a state member, and a tuple or list
literal of state members on the right of ``in``/``not in``; (b) a string equal to a state's value as an operand of
``==``, ``!=``, ``in``, ``not in``, or an element of a set, tuple or list literal.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import package_source
from tests.package_source import PACKAGE
from updraft.model.states import (
    FINISHED_TI_STATES,
    UNFINISHED_TI_STATES,
    DagRunState,
    TaskInstanceState,
)

HOME = PACKAGE / "model" / "states.py"
ENUMS = {"TaskInstanceState", "DagRunState"}
MEMBERS = {s.name for s in TaskInstanceState} | {s.name for s in DagRunState}
STATE_VALUES = {s.value for s in TaskInstanceState} | {s.value for s in DagRunState}

# (module under shared/updraft, string): a literal that equals a state's name but is not a state there.
ALLOWED = {
    # Airflow's DAG callback reason (success, task_failure, all_tasks_deadlocked, timed_out), a word of its own.
    ("scheduling/dag_callbacks.py", "success"),
    # The external task trigger's event status (Airflow's WorkflowTrigger protocol), not an instance's state.
    ("sensors/external_task.py", "success"),
    ("sensors/external_task.py", "skipped"),
    ("sensors/external_task.py", "failed"),
    # Pool slot kinds named in metric names (pool.<kind>_slots) and the pools API's fields, beside "open".
    ("metrics/airflow.py", "queued"),
    ("metrics/airflow.py", "running"),
    ("metrics/airflow.py", "deferred"),
    ("metrics/airflow.py", "scheduled"),
}


def _enum_aliases(tree: ast.Module) -> set[str]:
    """The names a module gives the state enums (and Airflow's ``State`` over them): imports and ``TI = ...``."""
    names = set(ENUMS)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in {"updraft.model.states", "updraft.sdk.state"}:
            names |= {alias.asname or alias.name for alias in node.names if alias.name in ENUMS | {"State"}}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in names:
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _is_member(node: ast.AST, aliases: set[str]) -> bool:
    """``TI.SUCCESS``, ``states.DagRunState.FAILED``, or either's ``.value``."""
    if isinstance(node, ast.Attribute) and node.attr == "value":
        node = node.value
    if not isinstance(node, ast.Attribute) or node.attr not in MEMBERS:
        return False
    owner = node.value
    return ((isinstance(owner, ast.Name) and owner.id in aliases)
            or (isinstance(owner, ast.Attribute) and owner.attr in ENUMS))


def _is_state_text(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in STATE_VALUES


def violations(source: str, module: str, allowed: set[tuple[str, str]] | None = None) -> Iterator[str]:
    """Each state copy in ``source`` (the module at ``module``, relative to the package), as ``module:line: what``;
    a string in ``allowed`` (default ``ALLOWED``) is passed over."""
    allowed = ALLOWED if allowed is None else allowed
    tree = package_source.parse(source)
    aliases = _enum_aliases(tree)
    for node in package_source.walk(tree):
        where = f"{module}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"set", "frozenset"}:
            literal = node.args[0] if node.args and isinstance(node.args[0], ast.List | ast.Tuple) else None
        else:
            literal = node if isinstance(node, ast.Set) else None
        if literal is not None and any(_is_member(e, aliases) for e in literal.elts):
            yield f"{where}: a set of states {ast.unparse(node)}"
        if isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators, strict=True):
                if (isinstance(op, ast.In | ast.NotIn) and isinstance(right, ast.Tuple | ast.List)
                        and any(_is_member(e, aliases) for e in right.elts)):
                    yield f"{where}: a set of states {ast.unparse(right)}"
            if any(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops):
                for operand in (node.left, *node.comparators):
                    if _is_state_text(operand) and (module, operand.value) not in allowed:
                        yield f"{where}: state {operand.value!r} compared as a string"
        if isinstance(node, ast.Set | ast.Tuple | ast.List):
            for element in node.elts:
                if _is_state_text(element) and (module, element.value) not in allowed:
                    yield f"{where}: state {element.value!r} collected as a string"


def _modules() -> list[Path]:
    return [path for path in package_source.modules() if path != HOME]


def test_the_scan_reads_the_package() -> None:
    modules = _modules()
    assert len(modules) > 300
    assert PACKAGE / "scheduling" / "decisions" / "marking.py" in modules


@pytest.mark.slow
def test_no_module_but_states_keeps_its_own_copy_of_a_state_grouping_or_name() -> None:
    found = [v for path in _modules()
             for v in violations(package_source.source(path), path.relative_to(PACKAGE).as_posix())]
    assert found == [], "state groupings and names belong in updraft/model/states.py:\n" + "\n".join(found)


def test_every_allowed_literal_is_still_there() -> None:
    """An allow-list entry whose literal is gone is stale: it would let a real copy in later."""
    for module, text in ALLOWED:
        path = PACKAGE / module
        found = list(violations(package_source.source(path), module, allowed=set()))
        assert any(repr(text) in v for v in found), (module, text)


@pytest.mark.parametrize("copy", [
    "from updraft.model.states import TaskInstanceState\nTI = TaskInstanceState\n"
    "FINISHED = frozenset({TI.SUCCESS, TI.FAILED, TI.SKIPPED, TI.UPSTREAM_FAILED, TI.REMOVED})",
    "from updraft.model.states import DagRunState as RS\nDONE = frozenset([RS.SUCCESS, RS.FAILED])",
    "from updraft.model import states\nx = run.state in (states.DagRunState.SUCCESS, states.DagRunState.FAILED)",
    "from updraft.model.states import TaskInstanceState\nOK = {TaskInstanceState.SUCCESS.value}",
    "from updraft.model.states import TaskInstanceState\nbusy = ti.state in SLOT_HOLDING | {TaskInstanceState.DEFERRED}",
    "ended = run.state == 'success'",
    "ended = run.state.value in ('success', 'failed')",
    "STATES = frozenset({'queued', 'running'})",
    "waiting = state != 'up_for_retry'",
])
def test_a_copy_is_caught(copy: str) -> None:
    assert list(violations(copy, "scheduling/somewhere.py"))


@pytest.mark.parametrize("fine", [
    "from updraft.model.states import DagRunState\nresult = (DagRunState.FAILED, 'timed out')",
    "from updraft.model.states import DagRunState\nchanged = store.set_run_state(expected=[DagRunState.QUEUED])",
    "kind = event['status'] == 'ran'",
    "log.info('task %s failed', key)",
    "x = {'state': 'success'}",
])
def test_what_is_not_a_copy_passes(fine: str) -> None:
    assert list(violations(fine, "scheduling/somewhere.py")) == []


def test_an_allowed_literal_is_allowed_only_in_its_module() -> None:
    source = "if reason == 'success':\n    pass"
    assert list(violations(source, "scheduling/dag_callbacks.py")) == []
    assert list(violations(source, "scheduling/decisions/run_state.py"))


def test_every_task_state_is_finished_or_unfinished_never_both() -> None:
    """Airflow's State.finished and State.unfinished split the states (None, "no status", is unfinished)."""
    assert FINISHED_TI_STATES.isdisjoint(UNFINISHED_TI_STATES)
    assert {None, *TaskInstanceState} == FINISHED_TI_STATES | UNFINISHED_TI_STATES
