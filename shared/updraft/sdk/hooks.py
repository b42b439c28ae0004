"""``BaseHook``: what a hook needs of Airflow, which is its connection and a logger.

A hook reads its credentials with ``get_connection`` (Airflow's lookup order: secrets backend, environment,
metastore) and logs through ``LoggingMixin`` to ``airflow.task.hooks.<module>.<Class>``, which the try's log
captures. ``get_hook`` finds the hook of a connection's type among the installed providers
(``updraft.sdk.providers_manager``), so hook code written for Airflow runs unchanged.
"""

from __future__ import annotations

from typing import Any

from updraft.sdk.connection import Connection
from updraft.sdk.logging_mixin import LoggingMixin


class BaseHook(LoggingMixin):
    """Airflow's ``BaseHook``: ``get_connection``, ``get_hook`` and a logger; subclasses implement ``get_conn``."""

    conn_name_attr: str | None = None
    default_conn_name = "default_conn_id"
    conn_type: str | None = None
    hook_name: str | None = None

    def __init__(self, logger_name: str | None = None) -> None:
        super().__init__()
        self._log_config_logger_name = "airflow.task.hooks"
        self._logger_name = logger_name

    @classmethod
    def get_connection(cls, conn_id: str) -> Connection:
        """The connection ``conn_id``; ``AirflowNotFoundException`` when no backend has it."""
        return Connection.get(conn_id)

    @classmethod
    async def aget_connection(cls, conn_id: str) -> Connection:
        """``get_connection`` for async code (triggers): the lookup itself is synchronous here."""
        return Connection.get(conn_id)

    @classmethod
    def get_hook(cls, conn_id: str, hook_params: dict[str, Any] | None = None) -> Any:
        """The hook of the connection's type, built for ``conn_id`` (``Connection.get_hook``)."""
        return cls.get_connection(conn_id).get_hook(hook_params=hook_params)

    @classmethod
    async def aget_hook(cls, conn_id: str, hook_params: dict[str, Any] | None = None) -> Any:
        return (await cls.aget_connection(conn_id)).get_hook(hook_params=hook_params)

    def get_conn(self) -> Any:
        """The client for this hook's connection (implemented by each hook)."""
        raise NotImplementedError()

    @classmethod
    def get_connection_form_widgets(cls) -> dict[str, Any]:
        return {}

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        return {}
