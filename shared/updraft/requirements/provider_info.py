"""The installed providers' metadata, read from the environment's ``providers.json``: the connection types they
declare, with the form hints Airflow's connection form draws (labels, placeholders, hidden fields, extra fields).

``providers.json`` is written by the installer beside the installed packages: a JSON list with one object per
installed provider, its ``get_provider_info()`` dict (Airflow's keys: ``"package-name"``, ``"connection-types"``
[``{"connection-type", "hook-class-name", "hook-name", "ui-field-behaviour", "conn-fields"}``], ...) plus
``"version"``. The API reads it here and never imports provider code (the user's packages are DAG code: they run
in the task children only), which is how Airflow 3.2+ builds its form too: from provider metadata, without
importing a hook (``ProvidersManager._load_ui_metadata``).

Where the file is: the path in ``UPDRAFT_PROVIDERS_INFO`` (set by local mode and the stack when the environment
has requirements); unset means no providers are installed, and only Updraft's built-in connection types exist:
Airflow core's ``generic`` and ``email`` and the types of the standard provider, which Updraft implements itself
(``fs``, ``package_index``).

Airflow's rules, kept: providers are read in package-name order and the first to declare a connection type owns
it (built-ins first); an entry without ``connection-type`` or ``hook-class-name`` is skipped; a
``ui-field-behaviour`` that does not match Airflow's schema (lists and maps of strings) is dropped with a warning,
the type still listed. A file that is not such a list is an error naming the file and what is wrong: the
installer wrote it, so a broken one is a broken install, never read as "no providers".

Stdlib only: the API Lambda imports this on the first connection-form request.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

VAR = "UPDRAFT_PROVIDERS_INFO"
FILE_NAME = "providers.json"

# The form's standard fields a ``ui-field-behaviour`` may hide, relabel or give a placeholder (Airflow's names).
STANDARD_FIELDS = ("description", "host", "schema", "login", "password", "port", "extra")

# Airflow core's connection types that no hook backs (ProvidersManager._init_airflow_core_hooks).
_CORE = ({"connection-type": "generic", "hook-name": "Generic"}, {"connection-type": "email", "hook-name": "Email"})

# The standard provider's connection types, as its get_provider_info() declares them: Updraft owns that provider
# (the installer never installs its wheel), so its types are always there.
_STANDARD = {
    "package-name": "apache-airflow-providers-standard",
    "version": "1.21.0",  # the release whose operators Updraft's follow (updraft.requirements.stubs)
    "description": "Airflow Standard Provider\n",
    "documentation-url": "https://airflow.apache.org/docs/apache-airflow-providers-standard/1.21.0",
    "connection-types": [
        {"hook-class-name": "airflow.providers.standard.hooks.filesystem.FSHook", "hook-name": "File (path)",
         "connection-type": "fs",
         "ui-field-behaviour": {"hidden-fields": ["host", "schema", "port", "login", "password", "extra"]},
         "conn-fields": {"path": {"label": "Path", "schema": {"type": ["string", "null"]}}}},
        {"hook-class-name": "airflow.providers.standard.hooks.package_index.PackageIndexHook",
         "hook-name": "Package Index (Python)", "connection-type": "package_index",
         "ui-field-behaviour": {
             "hidden-fields": ["schema", "port", "extra"], "relabeling": {"host": "Package Index URL"},
             "placeholders": {"host": "Example: https://my-package-mirror.net/pypi/repo-name/simple",
                              "login": "Username for package index",
                              "password": "Password for package index (will be masked)"}}},
    ],
}


class ProviderInfoError(ValueError):
    """``providers.json`` is not what the installer writes; the message names the file and the problem."""


@dataclass(frozen=True)
class FieldBehaviour:
    """How the form draws the standard fields (Airflow's ``ui-field-behaviour``, keys in Python style)."""

    hidden_fields: tuple[str, ...] = ()
    relabeling: Mapping[str, str] = field(default_factory=dict)
    placeholders: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ConnectionType:
    """One connection type the form offers.

    ``field_behaviour`` is None when the provider declares none (the form then draws every standard field as
    is); ``extra_fields`` maps each ``conn-fields`` name to Airflow's API form of it: ``{"value": default,
    "schema": {..., "title": label}, "description", "source": None}``, in the provider's order.
    """

    connection_type: str
    hook_name: str
    hook_class_name: str | None
    package_name: str | None
    field_behaviour: FieldBehaviour | None
    extra_fields: Mapping[str, Mapping[str, Any]]


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def _behaviour(raw: Any, connection_type: str, package: str | None) -> FieldBehaviour | None:
    """Airflow's ``_add_customized_fields``: kebab-case keys read, checked against its schema, else dropped."""
    if not raw:
        return None
    raw = raw if isinstance(raw, dict) else {"hidden-fields": None}  # not an object: refused below
    hidden, relabeling = raw.get("hidden-fields", []), raw.get("relabeling", {})
    placeholders = raw.get("placeholders", {})
    if not (_strings(hidden) and _string_map(relabeling) and _string_map(placeholders)):
        log.warning("Failed to add field behaviour for %s in package %s: not lists and maps of strings",
                    connection_type, package)
        return None
    return FieldBehaviour(tuple(hidden), dict(relabeling), dict(placeholders))


def _api_field(definition: Any) -> dict[str, Any]:
    """Airflow's ``ProvidersManager._to_api_format``: the label moves into the schema as its ``title``."""
    definition = definition if isinstance(definition, dict) else {}
    schema = dict(definition.get("schema") or {})
    if "label" in definition:
        schema["title"] = definition["label"]
    return {"value": schema.get("default"), "schema": schema, "description": definition.get("description"),
            "source": None}


def _declared(provider: Mapping[str, Any]) -> list[ConnectionType]:
    package = provider.get("package-name")
    out = []
    for entry in provider.get("connection-types") or []:
        if not isinstance(entry, dict):
            continue
        connection_type, hook_class = entry.get("connection-type"), entry.get("hook-class-name")
        if not (isinstance(connection_type, str) and connection_type and isinstance(hook_class, str) and hook_class):
            continue
        fields = entry.get("conn-fields") or {}
        out.append(ConnectionType(
            connection_type=connection_type, hook_name=str(entry.get("hook-name") or connection_type),
            hook_class_name=hook_class, package_name=package,
            field_behaviour=_behaviour(entry.get("ui-field-behaviour"), connection_type, package),
            extra_fields={str(name): _api_field(d) for name, d in fields.items()} if isinstance(fields, dict) else {},
        ))
    return out


def validate(data: Any, source: str) -> list[dict[str, Any]]:
    """``data`` as providers.json must hold it: a list of objects, each with a string ``package-name`` and
    ``version``, and ``connection-types`` (when present) a list. ``source`` names the file in the error."""
    if not isinstance(data, list):
        raise ProviderInfoError(f"{source}: expected a JSON list of provider infos, got {type(data).__name__}")
    for index, provider in enumerate(data):
        where = f"{source}: provider #{index}"
        if not isinstance(provider, dict):
            raise ProviderInfoError(f"{where} is a {type(provider).__name__}, not an object")
        for key in ("package-name", "version"):
            if not isinstance(provider.get(key), str):
                raise ProviderInfoError(f"{where} has no string {key!r}")
        if not isinstance(provider.get("connection-types", []), list):
            raise ProviderInfoError(f"{where} ({provider['package-name']}): 'connection-types' is not a list")
    return data


def load(path: str) -> list[dict[str, Any]]:
    """The provider infos in the file at ``path``, validated (:class:`ProviderInfoError` when it is not one)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as err:
        raise ProviderInfoError(f"{path}: cannot read the installed providers' info ({err.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ProviderInfoError(f"{path}: not JSON ({err})") from None
    return validate(data, path)


_cache: dict[str, tuple[tuple[int, int], list[dict[str, Any]]]] = {}


def installed(env: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The environment's providers: the file ``UPDRAFT_PROVIDERS_INFO`` names, or none when it is unset. Kept
    while the file is unchanged (its size and modification time), so a request pays one ``stat``."""
    path = (os.environ if env is None else env).get(VAR, "")
    if not path:
        return []
    try:
        stat = os.stat(path)
    except OSError as err:
        raise ProviderInfoError(f"{path} (named by {VAR}): cannot read the installed providers' info "
                                f"({err.strerror})") from None
    key = (stat.st_size, stat.st_mtime_ns)
    cached = _cache.get(path)
    if cached is None or cached[0] != key:
        cached = (key, load(path))
        _cache[path] = cached
    return cached[1]


def listed(providers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every provider of the environment, as Airflow's ``ProvidersManager().providers`` has them: Updraft's own
    standard provider, then the installed ones (a wheel of the standard provider is never installed)."""
    return [_STANDARD, *(p for p in providers if p["package-name"] != _STANDARD["package-name"])]


def connection_types(providers: list[dict[str, Any]]) -> list[ConnectionType]:
    """Every connection type: Updraft's built-ins and those the providers declare, sorted by type; the first
    declaration of a type (built-ins, then providers by package name) owns it, as in Airflow."""
    found: dict[str, ConnectionType] = {}
    for core in _CORE:
        found[core["connection-type"]] = ConnectionType(core["connection-type"], core["hook-name"], None, None,
                                                        None, {})
    for provider in (_STANDARD, *sorted(providers, key=lambda p: p["package-name"])):
        for declared in _declared(provider):
            if declared.connection_type in found:
                log.debug("Connection type %s is already declared; %s's is ignored", declared.connection_type,
                          declared.package_name)
                continue
            found[declared.connection_type] = declared
    return [found[name] for name in sorted(found)]
