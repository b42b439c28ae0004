"""``BaseHook``: what a hook needs of Airflow, which is its connection.

Updraft bundles no provider hooks; a DAG's own hook subclasses this one and reads its credentials with
``get_connection`` (Airflow's lookup order: secrets backend, environment, metastore), so hook code written for
Airflow runs unchanged.
"""

from __future__ import annotations

import logging
from typing import Any

from updraft.sdk.connection import Connection


class BaseHook:
    """Airflow's ``BaseHook``: ``get_connection`` and a logger; subclasses implement ``get_conn``."""

    conn_name_attr: str | None = None
    default_conn_name = "default_conn_id"
    conn_type: str | None = None
    hook_name: str | None = None

    def __init__(self, logger_name: str | None = None) -> None:
        self._logger_name = logger_name

    @property
    def log(self) -> logging.Logger:
        return logging.getLogger(self._logger_name or f"{type(self).__module__}.{type(self).__name__}")

    @classmethod
    def get_connection(cls, conn_id: str) -> Connection:
        """The connection ``conn_id``; ``AirflowNotFoundException`` when no backend has it."""
        return Connection.get(conn_id)

    @classmethod
    def get_hook(cls, conn_id: str, hook_params: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError("Updraft bundles no provider hooks: instantiate your hook class directly")

    def get_conn(self) -> Any:
        """The client for this hook's connection (implemented by each hook)."""
        raise NotImplementedError()
