"""DAGs that registered themselves while a DAG file ran (Airflow 3's auto-registration).

Airflow 3 keeps a DAG built by a ``with DAG(...)`` block or returned by a ``@dag``-decorated call even when the
file never assigns it to a global. The parser resets this registry before running a file and reads it after.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from updraft.sdk.dag import DAG

_registered: dict[int, DAG] = {}


def register(dag: DAG) -> None:
    if dag.auto_register:
        _registered[id(dag)] = dag


def registered_dags() -> list[DAG]:
    """The auto-registered DAGs, in registration order."""
    return list(_registered.values())


def reset() -> None:
    _registered.clear()
