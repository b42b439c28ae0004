"""The layers of ``shared/updraft``, as a tested contract: a module imports only from its own layer or the layers
below it, and no two top-level packages import each other, even through others.

The order, lowest first (every top-level package or module of ``updraft`` is in exactly one layer):

1. foundation: ``model`` (records and states), ``config`` (the environment's settings), ``resources``,
   ``aws_clients``, ``airflow_config``, ``secrets``, ``process_guard``, ``reaper``, ``requirements``, ``ui`` (the
   built UI's assets), ``plugins`` (the process's plugin registry, which the authoring layer asks) and the package
   root ``updraft`` (its version). Nothing here knows a DAG, a store or a handler.
2. authoring: what DAG files import, Airflow's public surface: ``sdk``, ``operators``, ``sensors``, ``triggers``,
   ``timetables``, ``hooks``, ``notifications``, ``airflow_providers``. One layer, not six: ``airflow.sdk.task``'s
   decorators build the standard provider's operators and ``airflow.sdk.DAG`` builds timetables, so splitting it
   would move Airflow's import paths (``docs/decisions/0027-layers.md``); the few imports from ``sdk`` up into
   its siblings are in :data:`ALLOWED`, so the packages inside the layer still form no circle.
3. serialization: a DAG <-> JSON.
4. store: the table and the bucket, behind ``store.api``.
5. limits: limits and claims (counters, tickets, their transactions), on the store's holder writes.
6. orchestration: ``scheduling`` and what it drives or reports through (``executors``, ``handler_events``,
   ``metrics``, ``traces``), and ``cost`` (a try's cost, read from the store).
7. parsing: DAG files -> serialized DAGs, in isolated children.
8. runtime: a try, a callback or a trigger's look, in the worker and its children.
9. services: what a Lambda handler needs, built on first use from the environment.
10. api: Airflow's REST API and the UI's routes.
11. local: local mode, which runs the handlers, the API and the embedded AWS on one machine.
12. cli: the ``updraft`` command, which also starts local mode.

Every import counts, a function's deferred one too; ``if TYPE_CHECKING:`` ones do not (``test_import_graph``).
An import the order forbids is either cut or listed in :data:`ALLOWED` with its reason.
"""

from __future__ import annotations

import pytest

from tests.unit.test_import_graph import by_package, cycles, import_graph

LAYERS: tuple[tuple[str, frozenset[str]], ...] = tuple((name, frozenset(members.split())) for name, members in (
    ("foundation", "updraft model config resources aws_clients airflow_config secrets process_guard reaper "
                   "requirements ui plugins"),
    ("authoring", "sdk operators sensors triggers timetables hooks notifications airflow_providers"),
    ("serialization", "serialization"),
    ("store", "store"),
    ("limits", "limits"),
    ("orchestration", "scheduling executors handler_events metrics traces cost"),
    ("parsing", "parsing"),
    ("runtime", "runtime"),
    ("services", "services"),
    ("api", "api"),
    ("local", "local"),
    ("cli", "cli"),
))

# Imports the order or the no-circle rule would refuse, each kept on purpose: (importer, imported) -> why.
ALLOWED: dict[tuple[str, str], str] = {
    ("updraft.sdk.decorators.taskflow", "updraft.operators.python"):
        "@task builds Airflow's PythonOperator (airflow.sdk.task, the standard provider's operator)",
    ("updraft.sdk.decorators.taskflow", "updraft.operators.python_venv"):
        "@task.virtualenv/@task.external_python build the standard provider's venv operators",
    ("updraft.sdk.decorators.taskflow", "updraft.operators.bash"):
        "@task.bash builds Airflow's BashOperator",
    ("updraft.sdk.decorators.taskflow", "updraft.sensors.python"):
        "@task.sensor builds Airflow's PythonSensor",
    ("updraft.sdk.decorators.asset", "updraft.operators.python"):
        "@asset's task is a PythonOperator, as in Airflow",
    ("updraft.sdk.assets", "updraft.triggers.aws_sources"):
        "airflow.sdk.AssetWatcher refuses a trigger that is not an event trigger when the DAG file is parsed",
    ("updraft.sdk.dag", "updraft.timetables.schedule"):
        "airflow.sdk.DAG(schedule=...) turns Airflow's schedule argument into a timetable, as Airflow's DAG does",
}


def _top(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def layer_of() -> dict[str, int]:
    return {member: index for index, (_, members) in enumerate(LAYERS) for member in members}


def violations(graph: dict[str, set[str]], allowed: dict[tuple[str, str], str]) -> list[str]:
    """Every import from a module to one of a higher layer, not allowed, as ``importer -> imported (low < high)``."""
    layers = layer_of()
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            low, high = layers[_top(module)], layers[_top(target)]
            if high > low and (module, target) not in allowed:
                found.append(f"{module} -> {target} ({LAYERS[low][0]} < {LAYERS[high][0]})")
    return found


def package_circles(graph: dict[str, set[str]], allowed: dict[tuple[str, str], str]) -> list[set[str]]:
    """The circles between top-level packages once the allowed imports are taken out."""
    kept = {module: {t for t in targets if (module, t) not in allowed} for module, targets in graph.items()}
    return cycles(by_package(kept))


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_every_top_level_package_and_module_is_in_exactly_one_layer(graph):
    members = [m for _, layer in LAYERS for m in layer]
    assert len(members) == len(set(members)), "a name is in two layers"
    assert set(members) == {_top(module) for module in graph}


def test_no_import_goes_up_the_layers(graph):
    assert violations(graph, ALLOWED) == []


def test_no_two_packages_import_each_other(graph):
    assert package_circles(graph, ALLOWED) == []


def test_every_allowed_import_still_exists(graph):
    """An allowed import that was cut leaves the list, so the list only ever shrinks to what is still needed."""
    assert [edge for edge in ALLOWED if edge[1] not in graph.get(edge[0], set())] == []


def test_an_upward_import_or_a_circle_fails(graph):
    """The checks see what a newcomer would add: the store importing the scheduler, and the authoring layer
    importing the store (which also closes a circle, the store reading timetables)."""
    added = {module: set(targets) for module, targets in graph.items()}
    added["updraft.store.api"].add("updraft.scheduling.scheduler")
    added["updraft.sdk.dag"].add("updraft.store.api")
    assert violations(added, ALLOWED) == [
        "updraft.sdk.dag -> updraft.store.api (authoring < store)",
        "updraft.store.api -> updraft.scheduling.scheduler (store < orchestration)"]
    assert any({"updraft.sdk", "updraft.store"} <= circle for circle in package_circles(added, ALLOWED))
    # Within a layer too: the SDK's core importing an operator (not one of the allowed decorator imports).
    added = {module: set(targets) for module, targets in graph.items()}
    added["updraft.sdk.baseoperator"].add("updraft.operators.empty")
    assert any({"updraft.sdk", "updraft.operators"} <= circle for circle in package_circles(added, ALLOWED))
