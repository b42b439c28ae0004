"""The domain-error table (``updraft.api.domain_errors``): every entry names an exception class, each reaches its
status and body through the app, a bare ``ValueError`` stays a 500, and no route catches a mapped error to
translate it again (the table is the one place)."""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path
from typing import Any, cast

import pytest

from tests.functional.lambda_helpers import lambda_context
from updraft.api.domain_errors import DOMAIN_ERRORS
from updraft.api.routing import API_PREFIX, Call, Route
from updraft.local.api_gateway import proxy_event

ROUTES = Path(__file__).parents[3] / "shared" / "updraft" / "api" / "routes"

# Each class's answer as the functional tests and Airflow pin it, for an exception built with "boom".
EXPECTED = {
    "updraft.sdk.exceptions.DagNotFound": (404, "boom"),
    "updraft.sdk.exceptions.ParamValidationError": (400, "boom"),
    "updraft.sdk.exceptions.DagRunAlreadyExists": (409, "boom"),
    "updraft.scheduling.commands.triggering.InvalidRunId": (400, "boom"),
    "updraft.timetables.evaluated.ManualIntervalNotEvaluated": (400, "boom"),
    "updraft.scheduling.commands.dag_deletion.DagStillRunning": (409, "Task instances of dag with id: 'boom' are still running"),
    "updraft.scheduling.commands.why.NotFound": (404, "boom"),
    "updraft.scheduling.commands.marker_clears.MarkerRecursionError": (400, "boom"),
    "updraft.scheduling.commands.backfill_commands.BackfillNotFound": (404, "boom"),
    "updraft.scheduling.commands.backfill_commands.AlreadyRunningBackfill": (409, "boom"),
    "updraft.scheduling.commands.backfill_commands.BackfillCompleted": (409, "boom"),
    "updraft.scheduling.commands.backfill_commands.InvalidBackfill": (422, "boom"),
    "updraft.scheduling.commands.backfill_commands.RerunKeepsConf": (400, "boom"),
    "updraft.store.state_stores.NegativeRetention": (400, "boom"),
    "updraft.requirements.provider_info.ProviderInfoError": (500, "The environment's installed providers cannot be "
                                                                  "read: boom"),
}


def _class(name: str) -> type[BaseException]:
    module, _, attr = name.rpartition(".")
    found = getattr(importlib.import_module(module), attr)
    assert isinstance(found, type) and issubclass(found, BaseException), name
    return found


def _answer(exc: BaseException) -> tuple[int, Any]:
    """What the app answers when a route raises ``exc``."""
    from updraft.api.app import build_app

    def fail(_call: Call) -> Any:
        raise exc

    def no_services() -> Any:
        raise AssertionError("a public route built the services")

    app = build_app(no_services, [Route("GET", API_PREFIX + "/version", fail)])  # a public path: no caller needed
    response = app.resolve(proxy_event("GET", API_PREFIX + "/version", {}, b""), cast(Any, lambda_context("api")))
    return response["statusCode"], json.loads(response["body"])


def test_every_entry_names_an_exception_class_by_its_own_module_and_is_pinned_here():
    assert set(EXPECTED) == set(DOMAIN_ERRORS)
    for name in DOMAIN_ERRORS:
        cls = _class(name)
        assert f"{cls.__module__}.{cls.__qualname__}" == name  # a re-export's name would never match


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_mapped_error_reaches_its_status_and_body_through_the_app(name):
    status, detail = EXPECTED[name]
    assert _answer(_class(name)("boom")) == (status, {"detail": detail})


def test_a_subclass_takes_its_nearest_mapped_class_and_other_errors_stay_500():
    why_not_found = _class("updraft.scheduling.commands.why.NotFound")

    class Narrower(why_not_found):  # type: ignore[misc, valid-type]
        pass

    assert _answer(Narrower("no such run")) == (404, {"detail": "no such run"})
    # ManualIntervalNotEvaluated and ProviderInfoError are ValueErrors: a bare one is still unexpected.
    assert _answer(ValueError("boom")) == (500, {"detail": "Internal Server Error"})
    assert _answer(LookupError("boom")) == (500, {"detail": "Internal Server Error"})


def _imported_names(tree: ast.AST) -> dict[str, str]:
    """Each name a module binds by import (at any depth) -> the dotted path it stands for."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update({alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names})
        elif isinstance(node, ast.Import):  # "import a.b" binds a; "import a.b as c" binds c to a.b
            for alias in node.names:
                bound = alias.name if alias.asname else alias.name.split(".")[0]
                names[alias.asname or bound] = bound
    return names


def _resolve(dotted: str) -> Any:
    """The object a dotted path names (a module's attribute, or an attribute of one), None if none."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            found = getattr(found, attr, None)
        return found
    return None


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _alternatives(expr: ast.expr) -> list[ast.expr]:
    """The classes a tuple (``except (A, B)``) or a union (``isinstance(e, A | B)``) lists."""
    if isinstance(expr, ast.Tuple):
        return [part for element in expr.elts for part in _alternatives(element)]
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
        return _alternatives(expr.left) + _alternatives(expr.right)
    return [expr]


def retranslations(source: str) -> list[str]:
    """The mapped domain errors ``source`` catches (``except``) or tests for (``isinstance``), by line."""
    tree = ast.parse(source)
    imported = _imported_names(tree)
    mapped = tuple(_class(name) for name in DOMAIN_ERRORS)
    caught: list[tuple[int, ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            caught.append((node.lineno, node.type))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
              and len(node.args) == 2):
            caught.append((node.lineno, node.args[1]))
    found = []
    for line, expr in caught:
        for part in _alternatives(expr):
            dotted = _dotted(part)
            if dotted is None or dotted.split(".")[0] not in imported:
                continue
            head, _, rest = dotted.partition(".")
            target = _resolve(imported[head] + ("." + rest if rest else ""))
            if isinstance(target, type) and issubclass(target, mapped):
                found.append(f"line {line}: {dotted}")
    return found


def test_the_scan_finds_a_mapped_error_caught_however_it_is_imported():
    source = ("from updraft.scheduling.commands import why\n"
              "from updraft.scheduling.commands.triggering import DagRunAlreadyExists as Exists\n"
              "def route():\n"
              "    from updraft.sdk.exceptions import DagNotFound, AirflowException\n"
              "    try:\n"
              "        pass\n"
              "    except why.NotFound:\n"
              "        pass\n"
              "    except (ValueError, Exists):\n"
              "        pass\n"
              "    except AirflowException as err:\n"
              "        if isinstance(err, ValueError | DagNotFound):\n"
              "            pass\n")
    assert retranslations(source) == ["line 7: why.NotFound", "line 9: Exists", "line 12: DagNotFound"]


@pytest.mark.parametrize("path", sorted(ROUTES.glob("*.py")), ids=lambda p: p.name)
def test_no_route_translates_a_mapped_domain_error(path):
    assert retranslations(path.read_text()) == [], "let the error through: updraft.api.domain_errors answers it"
