"""Airflow's ``ProvidersManager``: what the installed provider packages declare, read from their
``apache_airflow_provider`` entry points (each names the package's ``get_provider_info``).

DAG code asks it for the hook of a connection type (``Connection.get_hook``, ``BaseHook.get_hook``), the SQL dialect
of one (common-sql), a provider's version (hooks put it in their user agent), the ``@task.<name>`` decorators a
provider adds and the configuration defaults it declares (``updraft.sdk.configuration``). As in Airflow, the
manager is one per process and a hook class is imported only when its connection type is first asked for; a hook
class that does not import is logged and its type answers ``None``.

Only the environment's installed providers are seen: Updraft's own ``standard`` provider ships no distribution.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from updraft.sdk.module_loading import entry_points_with_dist, import_string

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "apache_airflow_provider"


@dataclass
class ProviderInfo:
    """A provider's version and its ``get_provider_info()`` dictionary."""

    version: str
    data: dict


class HookInfo(NamedTuple):
    """The hook of a connection type and the provider it comes from."""

    hook_class_name: str
    connection_id_attribute_name: str
    package_name: str
    hook_name: str
    connection_type: str
    connection_testable: bool
    dialects: list[str] = []


class DialectInfo(NamedTuple):
    """A SQL dialect class and the provider it comes from."""

    name: str
    dialect_class_name: str
    provider_name: str


class _LazyHooks(Mapping[str, "HookInfo | None"]):
    """Connection type -> HookInfo, importing a hook class the first time its type is asked for."""

    def __init__(self, declared: dict[str, tuple[str, str]], dialects: Callable[[], Mapping[str, DialectInfo]]):
        self._declared = declared  # conn type -> (hook class name, package name)
        self._resolved: dict[str, HookInfo | None] = {}
        self._dialects = dialects

    def __getitem__(self, conn_type: str) -> HookInfo | None:
        if conn_type not in self._declared:
            raise KeyError(conn_type)
        if conn_type not in self._resolved:
            self._resolved[conn_type] = self._import(conn_type)
        return self._resolved[conn_type]

    def __iter__(self) -> Iterator[str]:
        return iter(self._declared)

    def __len__(self) -> int:
        return len(self._declared)

    def _import(self, conn_type: str) -> HookInfo | None:
        class_name, package_name = self._declared[conn_type]
        try:
            hook_class = import_string(class_name)
        except Exception as exc:  # an optional dependency missing: Airflow logs it and the type has no hook
            log.warning("The hook %s of connection type %r (%s) could not be imported: %s", class_name, conn_type,
                        package_name, exc)
            return None
        return HookInfo(
            hook_class_name=class_name,
            connection_id_attribute_name=getattr(hook_class, "conn_name_attr", None) or "conn_id",
            package_name=package_name,
            hook_name=getattr(hook_class, "hook_name", None) or conn_type,
            connection_type=conn_type,
            connection_testable=callable(getattr(hook_class, "test_connection", None)),
            dialects=[name for name, info in self._dialects().items() if info.provider_name == package_name],
        )


class ProvidersManager:
    """One per process (``ProvidersManager() is ProvidersManager()``), as Airflow's; also
    ``airflow.sdk.providers_manager_runtime.ProvidersManagerTaskRuntime``."""

    _instance: ProvidersManager | None = None
    _initialized = False

    def __new__(cls) -> ProvidersManager:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __init__(self) -> None:
        if self._initialized:
            return
        self._providers: dict[str, ProviderInfo] = {}
        for entry_point, dist in entry_points_with_dist(ENTRY_POINT_GROUP):
            try:
                data = entry_point.load()()
            except Exception as exc:
                log.warning("The provider info of %s could not be read: %s", dist.metadata["Name"], exc)
                continue
            package = data.get("package-name") or dist.metadata["Name"]
            # The same distribution can sit in two folders of sys.path: the first one wins, as for imports.
            self._providers.setdefault(package, ProviderInfo(version=dist.version, data=data))
        declared: dict[str, tuple[str, str]] = {}
        for package, info in self._providers.items():
            for conn in info.data.get("connection-types", []):
                declared.setdefault(conn["connection-type"], (conn["hook-class-name"], package))
        self._hooks = _LazyHooks(declared, lambda: self.dialects)
        self._initialized = True

    @classmethod
    def _cleanup(cls) -> None:
        """Forget what was discovered: the next ``ProvidersManager()`` reads the entry points again (tests, and a
        process that activated the environment's packages after a first look)."""
        cls._instance = None

    @property
    def providers(self) -> dict[str, ProviderInfo]:
        """Package name (``apache-airflow-providers-...``) -> its info."""
        return self._providers

    @property
    def hooks(self) -> Mapping[str, HookInfo | None]:
        """Connection type -> the hook that serves it (None when its class does not import)."""
        return self._hooks

    @property
    def dialects(self) -> dict[str, DialectInfo]:
        """Dialect name -> the dialect class (common-sql's SQL operators build statements with it)."""
        return {
            d["dialect-type"]: DialectInfo(d["dialect-type"], d["dialect-class-name"], package)
            for package, info in self._providers.items() for d in info.data.get("dialects", [])
        }

    @property
    def taskflow_decorators(self) -> Mapping[str, Any]:
        """``@task.<name>`` -> the decorator a provider adds (``@task.sql``, ...), imported when asked for."""
        return _LazyImports({d["name"]: d["class-name"] for info in self._providers.values()
                             for d in info.data.get("task-decorators", [])})

    @property
    def provider_configs(self) -> list[tuple[str, dict[str, Any]]]:
        """(package name, its ``config`` section descriptions) of every provider that declares configuration."""
        return [(package, info.data["config"]) for package, info in self._providers.items()
                if info.data.get("config")]


class _LazyImports(Mapping[str, Any]):
    """Name -> the object a dotted path names, imported when first asked for."""

    def __init__(self, paths: dict[str, str]) -> None:
        self._paths = paths
        self._loaded: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._loaded:
            self._loaded[name] = import_string(self._paths[name])
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)
