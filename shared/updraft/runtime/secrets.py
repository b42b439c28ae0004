"""Where a try's Variables and Connections come from: the configured secrets backend, the environment, then
the environment's metastore (Airflow's order), set up for each try from the worker's environment.

The metastore is reached only through :class:`~updraft.sdk.execution.SecretsMetastore` (one variable or one
connection at a time), never by handing the task the store. The backend is rebuilt only when
``AIRFLOW__SECRETS__BACKEND``/``BACKEND_KWARGS`` change, and its AWS client is made on its first lookup, so a try
that reads no secret makes no secrets call.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from updraft.config import UpdraftConfig
from updraft.sdk.execution import SecretsBackend, use_secrets
from updraft.secrets.aws_backends import ClientFactory, build_backend

BACKEND_VAR = "AIRFLOW__SECRETS__BACKEND"
BACKEND_KWARGS_VAR = "AIRFLOW__SECRETS__BACKEND_KWARGS"


class StoreSecrets:
    """The metastore as a try sees it: the store's variable and connection operations, one key at a time."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def get_variable(self, key: str) -> str | None:
        record = self._store.get_variable(key)
        return record.value if record is not None else None

    def set_variable(self, key: str, value: str, description: str | None) -> None:
        self._store.set_variable(key, value, description)

    def delete_variable(self, key: str) -> bool:
        return bool(self._store.delete_variable(key))

    def get_connection(self, conn_id: str) -> str | None:
        record = self._store.get_connection(conn_id)
        if record is None:
            return None
        fields = {k: v for k, v in record.to_dict().items() if k != "conn_id" and v is not None}
        return json.dumps(fields)


def aws_client(service: str, kwargs: Mapping[str, Any]) -> Any:
    """A boto3 client for a secrets backend: the environment's region and endpoint (local mode's embedded AWS),
    then the backend's own ``region_name``/``endpoint_url``."""
    import boto3

    return boto3.client(service, **{**UpdraftConfig.from_env().client_kwargs(), **kwargs})  # type: ignore[call-overload]


_installed: tuple[int, str | None, str | None] | None = None


def prepare_secrets(store: Any, env: Mapping[str, str] | None = None,
                    client_factory: ClientFactory = aws_client) -> None:
    """Point ``Variable``/``Connection`` at this environment's backend and ``store`` (a no-op when nothing
    changed since the last try). A misconfigured backend raises, naming what is wrong: the try fails with it."""
    global _installed
    env = os.environ if env is None else env
    wanted = (id(store), env.get(BACKEND_VAR) or None, env.get(BACKEND_KWARGS_VAR) or None)
    if wanted == _installed:
        return
    backend: SecretsBackend | None = getattr(store, "secrets_backend", None)  # a try's child: read by the worker
    if wanted[1] and backend is None:
        backend = build_backend(wanted[1], wanted[2] or "", client_factory)
    metastore = StoreSecrets(store) if hasattr(store, "get_variable") else None
    use_secrets(metastore, backend)
    _installed = wanted


_worker_backend: dict[tuple[str, str], SecretsBackend] = {}


def configured_backend(env: Mapping[str, str] | None = None,
                       client_factory: ClientFactory = aws_client) -> SecretsBackend | None:
    """The environment's secrets backend as the worker reads it for a try's child (built once per setting)."""
    env = os.environ if env is None else env
    name, kwargs = env.get(BACKEND_VAR) or "", env.get(BACKEND_KWARGS_VAR) or ""
    if not name:
        return None
    if (name, kwargs) not in _worker_backend:
        _worker_backend[(name, kwargs)] = build_backend(name, kwargs, client_factory)
    return _worker_backend[(name, kwargs)]


def forget_secrets_setup() -> None:
    """Make the next try set up again (tests that change backends on the same store)."""
    global _installed
    _installed = None
