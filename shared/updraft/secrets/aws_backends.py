"""Airflow's Amazon provider secrets backends, on Updraft: AWS Secrets Manager and SSM Parameter Store.

Same class paths, same ``backend_kwargs`` and the same rules as the provider's (``apache-airflow-providers-amazon``
``SecretsManagerBackend`` / ``SystemsManagerParameterStoreBackend``): a secret's name is
``<prefix><sep><id>``; a prefix set to ``None`` sends no request of that kind; a ``*_lookup_pattern`` limits
which ids are asked for (``re.match``, case-insensitive); a Secrets Manager value that is a JSON object is a
connection in fields, its keys standardized with the provider's words (``user`` -> login, ``pass`` ->
password, ...). The boto3 client is made by the caller's factory on the first lookup, so a cold worker pays for
it only when a task asks for a secret.

An argument the provider knows but Updraft does not honour (``profile_name``, ``role_arn``, ``full_url_mode``
which the provider removed) is refused at configuration time, naming it, rather than silently ignored.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["BACKEND_CLASSES", "SecretsBackendError", "SecretsManagerBackend", "SystemsManagerParameterStoreBackend",
           "build_backend"]

log = logging.getLogger(__name__)

ClientFactory = Callable[[str, Mapping[str, Any]], Any]  # (service, client kwargs) -> boto3 client

# The boto3 client arguments the provider takes from ``backend_kwargs``.
_CLIENT_KWARGS = ("region_name", "endpoint_url", "verify", "api_version", "use_ssl")


class SecretsBackendError(RuntimeError):
    """A backend that is misconfigured, or that AWS refused (denied, throttled): the message names the key."""


class _AwsBackend:
    service = ""
    default_prefixes: dict[str, str | None] = {}
    extra_arguments: tuple[str, ...] = ()

    def __init__(self, client_factory: ClientFactory, **kwargs: Any) -> None:
        prefixes: dict[str, str | None] = {}
        for kind, default in self.default_prefixes.items():
            prefix = kwargs.pop(f"{kind}_prefix", default)
            prefixes[kind] = prefix.rstrip(self._sep_of(kwargs)) if prefix else prefix
        self.prefixes = prefixes
        self.patterns: dict[str, str | None] = {kind: kwargs.pop(f"{kind}_lookup_pattern", None)
                                                for kind in self.default_prefixes}
        self.options = {name: kwargs.pop(name) for name in self.extra_arguments if name in kwargs}
        self.client_kwargs = {name: kwargs.pop(name) for name in _CLIENT_KWARGS if kwargs.get(name) is not None}
        for name in _CLIENT_KWARGS:
            kwargs.pop(name, None)
        if kwargs:
            raise SecretsBackendError(
                f"{type(self).__name__}: backend_kwargs {', '.join(sorted(kwargs))} not supported by Updraft "
                f"(supported: {', '.join(self.supported_arguments())})")
        self._client_factory = client_factory
        self._client: Any = None

    @classmethod
    def supported_arguments(cls) -> list[str]:
        kinds = list(cls.default_prefixes)
        return [*(f"{k}_prefix" for k in kinds), *(f"{k}_lookup_pattern" for k in kinds), *cls.extra_arguments,
                *_CLIENT_KWARGS]

    @staticmethod
    def _sep_of(kwargs: Mapping[str, Any]) -> str:
        return "/"

    @property
    def sep(self) -> str:
        return "/"

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._client_factory(self.service, self.client_kwargs)
        return self._client

    def path_of(self, kind: str, key: str) -> str | None:
        """The secret's name for ``key``, or None when this backend is not asked for it (prefix None, pattern)."""
        prefix = self.prefixes[kind]
        if prefix is None:
            return None
        pattern = self.patterns[kind]
        if pattern and not re.match(pattern, key, re.IGNORECASE):
            return None
        return f"{prefix}{self.sep}{key}" if prefix else key

    def _lookup(self, kind: str, key: str) -> str | None:
        path = self.path_of(kind, key)
        if path is None:
            return None
        try:
            return self._read(path)
        except Exception as exc:
            from botocore.exceptions import ClientError

            if isinstance(exc, ClientError):
                code = exc.response.get("Error", {}).get("Code", "")
                raise SecretsBackendError(f"{type(self).__name__} could not read {kind[:-1]} {key!r} ({path}): "
                                          f"{code}: {exc.response.get('Error', {}).get('Message', '')}") from None
            raise

    def _read(self, path: str) -> str | None:
        raise NotImplementedError

    def get_variable(self, key: str) -> str | None:
        return self._lookup("variables", key)

    def get_conn_value(self, conn_id: str) -> str | None:
        return self._lookup("connections", conn_id)

    def get_config(self, key: str) -> str | None:
        return self._lookup("config", key)


class SecretsManagerBackend(_AwsBackend):
    """``airflow.providers.amazon.aws.secrets.secrets_manager.SecretsManagerBackend``."""

    service = "secretsmanager"
    default_prefixes = {"connections": "airflow/connections", "variables": "airflow/variables",
                        "config": "airflow/config"}
    extra_arguments = ("sep", "extra_conn_words")
    CONN_WORDS: dict[str, list[str]] = {
        "login": ["login", "user", "username", "user_name"],
        "password": ["password", "pass", "key"],
        "host": ["host", "remote_host", "server"],
        "port": ["port"],
        "schema": ["database", "schema"],
        "conn_type": ["conn_type", "conn_id", "connection_type", "engine"],
        "extra": ["extra"],
    }

    @staticmethod
    def _sep_of(kwargs: Mapping[str, Any]) -> str:
        return str(kwargs.get("sep", "/"))

    @property
    def sep(self) -> str:
        return str(self.options.get("sep", "/"))

    def _read(self, path: str) -> str | None:
        try:
            response = self.client.get_secret_value(SecretId=path)
        except self.client.exceptions.ResourceNotFoundException:
            return None
        value = response.get("SecretString")
        return value if value is None else str(value)

    def get_conn_value(self, conn_id: str) -> str | None:
        secret = super().get_conn_value(conn_id)
        if secret is not None and secret.strip().startswith("{"):
            return json.dumps(self._standardize(json.loads(secret)))
        return secret

    def _standardize(self, secret: dict[str, Any]) -> dict[str, Any]:
        words = {field: list(names) for field, names in self.CONN_WORDS.items()}
        for field, more in (self.options.get("extra_conn_words") or {}).items():
            words["login" if field == "user" else field].extend(more)
        return {field: next((v for k, v in secret.items() if k in names), None) for field, names in words.items()}


class SystemsManagerParameterStoreBackend(_AwsBackend):
    """``airflow.providers.amazon.aws.secrets.systems_manager.SystemsManagerParameterStoreBackend``."""

    service = "ssm"
    default_prefixes = {"connections": "/airflow/connections", "variables": "/airflow/variables",
                        "config": "/airflow/config"}

    def _read(self, path: str) -> str | None:
        try:
            response = self.client.get_parameter(Name=path, WithDecryption=True)
        except self.client.exceptions.ParameterNotFound:
            return None
        return str(response["Parameter"]["Value"])


BACKEND_CLASSES: dict[str, type[_AwsBackend]] = {
    "airflow.providers.amazon.aws.secrets.secrets_manager.SecretsManagerBackend": SecretsManagerBackend,
    "airflow.providers.amazon.aws.secrets.systems_manager.SystemsManagerParameterStoreBackend":
        SystemsManagerParameterStoreBackend,
}


def build_backend(class_path: str, kwargs_json: str, client_factory: ClientFactory) -> _AwsBackend:
    """Airflow's ``[secrets] backend`` and ``backend_kwargs``; anything else is a clear error naming it."""
    backend_class = BACKEND_CLASSES.get(class_path.strip())
    if backend_class is None:
        raise SecretsBackendError(f"secrets backend {class_path!r} is not supported by Updraft: use one of "
                                  f"{', '.join(BACKEND_CLASSES)}")
    try:
        kwargs = json.loads(kwargs_json) if kwargs_json.strip() else {}
    except json.JSONDecodeError as exc:
        raise SecretsBackendError(f"AIRFLOW__SECRETS__BACKEND_KWARGS is not JSON: {exc}") from None
    if not isinstance(kwargs, dict):
        raise SecretsBackendError("AIRFLOW__SECRETS__BACKEND_KWARGS must be a JSON object")
    return backend_class(client_factory, **kwargs)
