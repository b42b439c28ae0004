"""Airflow Connections: credentials by ``conn_id``, from the configured secrets backend, ``AIRFLOW_CONN_<ID>``
and then the environment's metastore, in Airflow's order.

The URI and JSON forms and their parsing follow Airflow exactly, so a connection string that works in an
Airflow deployment's environment works here unchanged. A connection read is masked in the try's log from then
on (its password, and its extra's values under sensitive keys), as Airflow's secrets masker does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from updraft.sdk._internal.backends import BackendChain
from updraft.sdk.exceptions import AirflowException, AirflowNotFoundException
from updraft.secrets.masker import mask_secret

__all__ = ["ENV_PREFIX", "Connection", "register_backend", "reset_backends"]

log = logging.getLogger(__name__)

ENV_PREFIX = "AIRFLOW_CONN_"
PORT_MIN = 0
PORT_MAX = 65535

# A backend returns a Connection, its URI or JSON string, or None when it does not know the id.
ConnectionGetter = Callable[[str], "Connection | str | None"]


def _validate_port(value: Any) -> None:
    if value is None:
        return
    if type(value) is not int:
        raise ValueError(f"Expected integer value for `port`, but got {value!r} instead.")
    if not PORT_MIN <= value <= PORT_MAX:
        raise ValueError(f"Expected value for `port` in the range {PORT_MIN}-{PORT_MAX}, but got {value!r} instead.")


def _parse_netloc_to_hostname(uri_parts: Any) -> str:
    """The host as written: ``urlsplit().hostname`` lower-cases it and loses hosts that contain a path."""
    hostname = unquote(uri_parts.hostname or "")
    if "/" in hostname:
        hostname = uri_parts.netloc
        if "@" in hostname:
            hostname = hostname.rsplit("@", 1)[1]
        if ":" in hostname:
            hostname = hostname.split(":", 1)[0]
        hostname = unquote(hostname)
    return hostname


class Connection:
    """Host, credentials and extras for an external system; build it from fields or from ``uri=``."""

    EXTRA_KEY = "__extra__"
    _FIELDS = ("conn_id", "conn_type", "description", "host", "schema", "login", "password", "port", "extra")

    def __init__(
        self,
        conn_id: str | None = None,
        conn_type: str | None = None,
        description: str | None = None,
        host: str | None = None,
        login: str | None = None,
        password: str | None = None,
        schema: str | None = None,
        port: int | None = None,
        extra: str | dict | None = None,
        uri: str | None = None,
    ) -> None:
        fields: dict[str, Any] = {"conn_type": conn_type, "description": description, "host": host, "login": login,
                  "password": password, "schema": schema, "port": port, "extra": extra}
        if uri is not None and any(v is not None for v in fields.values()):
            raise AirflowException(
                "You must create an object using the URI or individual values "
                "(conn_type, host, login, password, schema, port or extra). "
                "You can't mix these two ways to create this object."
            )
        if uri is not None:
            fields = self.from_uri(uri, conn_id=conn_id)._values()
            fields.pop("conn_id")
        _validate_port(fields["port"])
        if isinstance(fields["extra"], dict):
            # Airflow 2's models.Connection accepted a dict; it is stored as JSON either way.
            fields["extra"] = json.dumps(fields["extra"])
        self.conn_id = conn_id
        self.conn_type: str | None = fields["conn_type"]
        self.description: str | None = fields["description"]
        self.host: str | None = fields["host"]
        self.schema: str | None = fields["schema"]
        self.login: str | None = fields["login"]
        self.password: str | None = fields["password"]
        self.port: int | None = fields["port"]
        self.extra: str | None = fields["extra"]

    def _values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._FIELDS}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Connection):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        # Never the password: reprs end up in logs and import-error tracebacks.
        return f"Connection(conn_id={self.conn_id!r}, conn_type={self.conn_type!r}, host={self.host!r})"

    @classmethod
    def get(cls, conn_id: str) -> Connection:
        """The connection from the first backend that knows ``conn_id``; Airflow's error when none does."""
        failures: list[str] = []
        found = _backends.first(conn_id, failures)
        if found is None:
            reason = f" (a secrets backend failed: {'; '.join(failures)})" if failures else ""
            raise AirflowNotFoundException(f"The conn_id `{conn_id}` isn't defined{reason}")
        if isinstance(found, Connection):
            connection = found
        else:
            try:
                connection = cls.deserialize(conn_id, found)
            except (AirflowException, ValueError, TypeError) as exc:
                # Never the value itself in the message: it is the credentials.
                raise AirflowException(f"The conn_id `{conn_id}` is stored in a form that is neither a connection "
                                       f"URI nor Airflow's JSON ({type(exc).__name__})") from None
        connection.mask_secrets()
        return connection

    @classmethod
    async def async_get(cls, conn_id: str) -> Connection:
        """``get`` for async code (triggers); the lookup itself is synchronous."""
        return cls.get(conn_id)

    def get_hook(self, *, hook_params: dict[str, Any] | None = None) -> Any:
        """The hook an installed provider declares for this connection's type, built for this ``conn_id``
        (Airflow's ``Connection.get_hook``); AirflowException naming the type when no installed provider has one."""
        # lazy: cold start (hook lookup loads provider metadata; only get_hook needs it)
        from updraft.sdk.module_loading import import_string
        from updraft.sdk.providers_manager import ProvidersManager

        hook = ProvidersManager().hooks.get(self.conn_type or "")
        if hook is None:
            raise AirflowException(f'Unknown hook type "{self.conn_type}": no installed provider declares a hook for '
                                   "this connection type (add its apache-airflow-providers-* package to the "
                                   "environment's requirements)")
        hook_class = import_string(hook.hook_class_name)
        return hook_class(**{hook.connection_id_attribute_name: self.conn_id}, **(hook_params or {}))

    def mask_secrets(self) -> None:
        """Hide this connection's password and its extra's sensitive values in logs from now on."""
        mask_secret(self.password)
        if self.extra:
            mask_secret(self.extra_dejson)

    # Airflow 2 spelled the lookup this way on models.Connection.
    get_connection_from_secrets = get

    @classmethod
    def deserialize(cls, conn_id: str, value: str) -> Connection:
        """A stored value: JSON when it starts with ``{``, a URI otherwise (Airflow's secrets-backend rule)."""
        value = value.strip()
        if value.startswith("{"):
            return cls.from_json(value, conn_id=conn_id)
        return cls.from_uri(value, conn_id=conn_id)

    @staticmethod
    def _normalize_conn_type(conn_type: str) -> str:
        if conn_type == "postgresql":
            return "postgres"
        return conn_type.replace("-", "_")


    @classmethod
    def from_uri(cls, uri: str, conn_id: str | None) -> Connection:
        """Parse Airflow's connection URI (``type://login:password@host:port/schema?extra``)."""
        schemes = uri.count("://")
        if schemes > 2:
            raise AirflowException(f"Invalid connection string: {uri}.")
        host_with_protocol = schemes == 2
        conn_type = urlsplit(uri).scheme
        rest = uri.replace(f"{conn_type}://", "" if host_with_protocol else "//")
        if host_with_protocol:
            before = rest.split("://", 1)[0]
            if "@" in before or ":" in before:
                raise AirflowException(f"Invalid connection string: {uri}.")
        parts = urlsplit(rest)
        protocol = parts.scheme if host_with_protocol else None
        host = _parse_netloc_to_hostname(parts)
        if host and protocol:
            host = f"{protocol}://{host}"
        quoted_schema = parts.path[1:]
        extra = None
        if parts.query:
            query = dict(parse_qsl(parts.query, keep_blank_values=True))
            extra = query[cls.EXTRA_KEY] if cls.EXTRA_KEY in query else json.dumps(query)
        return cls(
            conn_id=conn_id,
            conn_type=cls._normalize_conn_type(conn_type),
            host=host,
            schema=unquote(quoted_schema) if quoted_schema else quoted_schema,
            login=unquote(parts.username) if parts.username else parts.username,
            password=unquote(parts.password) if parts.password else parts.password,
            port=parts.port,
            extra=extra,
        )

    @classmethod
    def from_json(cls, value: str, conn_id: str | None = None) -> Connection:
        """Parse Airflow's JSON form as the task SDK does: ``extra`` may be an object or a JSON string; ``port``
        anything ``int()`` takes (a string, a float), and a false one (``0``, ``""``) means no port. Keys are the
        constructor's, so an unknown key or a ``conn_id`` (the id is the variable's or the backend's name, never
        the value's) is a ``TypeError``, as in Airflow."""
        kwargs = json.loads(value)
        extra = kwargs.pop("extra", None)
        if extra:
            kwargs["extra"] = extra if isinstance(extra, str) else json.dumps(extra)
        conn_type = kwargs.pop("conn_type", None)
        if conn_type:
            kwargs["conn_type"] = cls._normalize_conn_type(conn_type)
        port = kwargs.pop("port", None)
        if port:
            try:
                kwargs["port"] = int(port)
            except ValueError:
                raise ValueError(f"Expected integer value for `port`, but got {port!r} instead.") from None
        return cls(conn_id=conn_id, **kwargs)

    def get_uri(self) -> str:
        """The URI form, which ``from_uri`` reads back to an equal connection."""
        uri = f"{self.conn_type.lower().replace('_', '-')}://" if self.conn_type else "//"
        host_to_use = self.host
        protocol_to_add = None
        if self.host and "://" in self.host:
            protocol, host = self.host.split("://", 1)
            if protocol != self.conn_type:
                host_to_use, protocol_to_add = host, protocol
        if protocol_to_add:
            uri += f"{protocol_to_add}://"
        authority = ""
        if self.login is not None:
            authority += quote(self.login, safe="")
        if self.password is not None:
            authority += ":" + quote(self.password, safe="")
        if authority:
            authority += "@"
            uri += authority
        host_block = quote(host_to_use, safe="") if host_to_use else ""
        if self.port:  # port 0 is no port, as in Airflow
            host_block += f"@:{self.port}" if not host_block and not authority else f":{self.port}"
        if self.schema:
            host_block += f"/{quote(self.schema, safe='')}"
        uri += host_block
        if self.extra:
            try:
                extra = self.extra_dejson
                query: str | None = urlencode(extra)
            except TypeError:
                query = None
            sep = "?" if self.schema else "/?"
            if query and extra == dict(parse_qsl(query, keep_blank_values=True)):
                uri += sep + query
            else:
                uri += sep + urlencode({self.EXTRA_KEY: self.extra})
        return uri

    @property
    def extra_dejson(self) -> dict:
        """``extra`` as a dict; malformed JSON is logged and read as empty, as Airflow does."""
        if not self.extra:
            return {}
        try:
            return json.loads(self.extra)
        except json.JSONDecodeError:
            log.exception("Failed to deserialize extra property `extra`, returning empty dictionary")
            return {}

    def to_dict(self, *, prune_empty: bool = False, validate: bool = True) -> dict[str, Any]:
        conn: dict[str, Any] = {name: getattr(self, name) for name in self._FIELDS if name != "extra"}
        if prune_empty:
            conn = {k: v for k, v in conn.items() if v is not None}
        extra = self.extra_dejson
        if extra or not prune_empty:
            conn["extra"] = extra
        if validate:
            json.dumps(conn)
        return conn

    def as_json(self) -> str:
        conn = self.to_dict(prune_empty=True, validate=False)
        conn.pop("conn_id", None)
        return json.dumps(conn)


def _is_answer(value: Connection | str | None) -> bool:
    """A backend's value names a connection unless it is empty or blank: Airflow's backends skip an empty value
    and fail on a blank one, and either way the next backend is asked."""
    return isinstance(value, Connection) or bool(value and value.strip())


_backends: BackendChain[Connection | str] = BackendChain(ENV_PREFIX, kind="connection", log_failure=log.debug,
                                                          found=_is_answer)


def register_backend(getter: ConnectionGetter, *, before_environment: bool = False) -> None:
    """Add a backend after the environment (and any registered earlier), or before it (a secrets backend)."""
    _backends.register(getter, before_environment=before_environment)


def reset_backends() -> None:
    """Back to environment variables only."""
    _backends.reset()
