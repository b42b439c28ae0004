"""The source of a decorated task function as another interpreter must see it: without its task decorators.

A ``@task.virtualenv`` function is run from its source text; left on, ``@task.virtualenv(...)`` would need Airflow
(and the DAG file's names) in the target interpreter. Airflow removes the task decorator itself, ``@setup``,
``@teardown``, ``@task.run_if`` and ``@task.skip_if`` (``sdk/definitions/_internal/decorators.py``, with libcst);
here the decorators' line spans come from :mod:`ast`, so no parser library is needed, and other decorators stay.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable


def _decorator_name(node: ast.expr) -> str | None:
    """``task.virtualenv`` for ``@task.virtualenv`` or ``@task.virtualenv(...)``; ``setup`` for ``@setup``."""
    if isinstance(node, ast.Call):
        return _decorator_name(node.func)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def remove_task_decorator(python_source: str, task_decorator_name: str) -> str:
    """``python_source`` with the task decorators of its function definitions removed (Airflow's function)."""
    names = {"setup", "teardown", "task.skip_if", "task.run_if", task_decorator_name.strip("@")}
    lines = python_source.splitlines(keepends=True)
    drop: set[int] = set()
    for node in ast.walk(ast.parse(python_source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                if _decorator_name(decorator) in names:
                    assert decorator.end_lineno is not None
                    drop.update(range(decorator.lineno - 1, decorator.end_lineno))
    return "".join(line for index, line in enumerate(lines) if index not in drop)


def decorated_function_source(function: Callable, task_decorator_name: str) -> str:
    """Airflow's ``DecoratedOperator.get_python_source``: comment lines dropped, dedented, decorators removed."""
    raw_lines = [line for line in inspect.getsource(function).splitlines() if not line.strip().startswith("#")]
    return remove_task_decorator(textwrap.dedent("\n".join(raw_lines)) + "\n", task_decorator_name)
