"""Regenerate tests/unit/sdk/airflow_arguments.json: every argument Airflow's authoring surface accepts.

Read with ``ast`` from Airflow's own source (no Airflow import), so the list is exactly what a DAG file may pass:
``DAG`` (and ``@dag``, which forwards to it) from its attrs fields, ``BaseOperator`` / ``BaseSensorOperator``
from their ``__init__``, ``@task`` from its stub's ``__call__``, ``TaskGroup`` from its attrs fields and
``@task_group`` from its overload. tests/unit/sdk/test_argument_support.py checks Updraft's one table
(updraft.sdk._internal.argument_support) against this file, so a new Airflow argument fails that test.

Usage: python bench/airflow_arguments.py [AIRFLOW_SOURCE_DIR]   (default /tmp/af_surf/x/airflow)
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "unit" / "sdk" / "airflow_arguments.json"


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)


def _attrs_init_fields(cls: ast.ClassDef) -> dict[str, str]:
    """attrs fields that ``__init__`` takes (not ``init=False``), name -> default source (private names unprefixed)."""
    fields: dict[str, str] = {}
    for node in cls.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        value = node.value
        default = "" if value is None else ast.unparse(value)
        if isinstance(value, ast.Call) and ast.unparse(value.func) == "attrs.field":
            kw = {k.arg: k.value for k in value.keywords}
            if isinstance(kw.get("init"), ast.Constant) and kw["init"].value is False:
                continue
            alias = kw.get("alias")
            name = alias.value if isinstance(alias, ast.Constant) else node.target.id.lstrip("_")
            default = ast.unparse(kw["default"]) if "default" in kw else ("<factory>" if "factory" in kw else "")
        else:
            name = node.target.id
        if "ClassVar" in ast.unparse(node.annotation):
            continue
        fields[name] = default
    return fields


def _signature(func: ast.FunctionDef) -> dict[str, str]:
    args = func.args
    out: dict[str, str] = {}
    positional = args.posonlyargs + args.args
    pos_defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = [*zip(positional, pos_defaults, strict=True), *zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    for arg, default in pairs:
        if arg.arg in ("self", "cls"):
            continue
        out[arg.arg] = "" if default is None else ast.unparse(default)
    return out


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef:
    return next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name)


def collect(root: Path) -> dict[str, dict[str, str]]:
    def parse(rel: str) -> ast.Module:
        return ast.parse((root / rel).read_text())

    dag_fields = _attrs_init_fields(_class(parse("sdk/definitions/dag.py"), "DAG"))
    group_tree = parse("sdk/definitions/decorators/task_group.py")
    group_overload = next(n for n in group_tree.body if isinstance(n, ast.FunctionDef) and n.name == "task_group"
                          and n.args.args and n.args.args[0].arg == "group_id")
    task_stub = _class(parse("sdk/definitions/decorators/__init__.pyi"), "TaskDecoratorCollection")
    task_call = next(n for n in task_stub.body if isinstance(n, ast.FunctionDef) and n.name == "__call__"
                     and n.args.kwonlyargs)
    return {
        "DAG": dag_fields,
        "dag": dag_fields,  # @dag(**kwargs) forwards every keyword to DAG
        "BaseOperator": _signature(_method(_class(parse("sdk/bases/operator.py"), "BaseOperator"), "__init__")),
        "BaseSensorOperator": _signature(_method(_class(parse("sdk/bases/sensor.py"), "BaseSensorOperator"),
                                                 "__init__")),
        "task": _signature(task_call),  # and every BaseOperator keyword
        "TaskGroup": _attrs_init_fields(_class(parse("sdk/definitions/taskgroup.py"), "TaskGroup")),
        "task_group": _signature(group_overload),
    }


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/af_surf/x/airflow")
    surfaces = collect(root)
    OUT.write_text(json.dumps(surfaces, indent=1, sort_keys=True) + "\n")
    print(f"{'surface':<20} arguments")
    for name, args in surfaces.items():
        print(f"{name:<20} {len(args)}")


if __name__ == "__main__":
    main()
