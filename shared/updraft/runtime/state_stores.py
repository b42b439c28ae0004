"""``task_state_store`` and ``asset_state_store`` in a try's context (Airflow 3.3's AIP-103 accessors).

As Airflow's ``airflow.sdk.execution_time.context`` has them: ``TaskStateStoreAccessor`` keeps keys of the try's
own task instance (every try of the instance sees them; each map index has its own); ``AssetStateStoreAccessors``
holds one ``AssetStateStoreAccessor`` per concrete inlet and outlet of the task (``[MY_ASSET]``, or the methods
directly when the task has exactly one). The task accessor is synchronous only, as in Airflow 3.3.2 (it has no
``aget``/``aset``); the asset accessors have the async variants too.

The accessors reach the store through the try's :class:`~updraft.runtime.store_proxy.StoreProxy`, which the
worker fences: a try reads and writes only its own task instance's state and the assets it has as inlets or
outlets (``store_proxy``'s ``*_task_state``/``*_asset_state`` handlers).

Retention: ``set(key, value, retention=...)`` takes a ``timedelta``, :data:`NEVER_EXPIRE`, or None for
``[state_store] default_retention_days`` (``AIRFLOW__STATE_STORE__DEFAULT_RETENTION_DAYS``, 30; 0 never
expires). The expiry is computed from the worker's clock, as Airflow resolves it on the worker.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
from typing import Any

from updraft import airflow_config
from updraft.model.records import TIKey
from updraft.sdk.assets import Asset, AssetAlias, AssetNameRef, AssetUriRef
from updraft.store.state_stores import default_expiry, max_value_bytes

log = logging.getLogger(__name__)

#: ``retention=NEVER_EXPIRE``: the key never expires, whatever ``default_retention_days`` says.
NEVER_EXPIRE: dt.timedelta = dt.timedelta.max


def _checked_value(value: Any, what: str, key: str) -> Any:
    """Airflow's checks on a value: not None, JSON; a value past ``max_value_storage_bytes`` is written with a
    warning (workers are never stopped mid-task by the limit, as in Airflow)."""
    if value is None:
        raise ValueError("Cannot set value as None")
    size = len(json.dumps(value))
    limit = max_value_bytes()
    if 0 < limit < size:
        log.warning("%s value for key %r is %d bytes, which exceeds configured max_value_storage_bytes=%d.",
                    what, key, size, limit)
    return value


DEFAULT_BACKEND = "airflow.state.metastore.MetastoreBackend"


def _refuse_other_backends() -> None:
    """Updraft keeps state in its own table only: a backend class configured for Airflow is refused, by name,
    rather than left unused."""
    worker = airflow_config.get("workers", "state_store_backend", "")
    server = airflow_config.get("state_store", "backend", DEFAULT_BACKEND)
    for name, value in (("AIRFLOW__WORKERS__STATE_STORE_BACKEND", worker),
                        ("AIRFLOW__STATE_STORE__BACKEND", "" if server == DEFAULT_BACKEND else server)):
        if value:
            raise NotImplementedError(f"{name}={value!r}: custom state store backends are not supported by "
                                      "Updraft, which keeps task and asset state in its DynamoDB table; unset it")


def expires_at(retention: dt.timedelta | None, now: dt.datetime) -> dt.datetime | None:
    """When a key set ``now`` with ``retention`` expires (None: never)."""
    if retention is NEVER_EXPIRE:
        return None
    if retention is not None:
        if not isinstance(retention, dt.timedelta):
            raise TypeError(f"retention must be a timedelta or NEVER_EXPIRE, got {type(retention).__name__}")
        return now + retention
    return default_expiry(now)


def _now(store: Any) -> dt.datetime:
    """The worker's clock through the proxy (a try's timestamps are the worker's), else this process's."""
    clock = getattr(store, "now", None)
    return clock() if callable(clock) else dt.datetime.now(dt.UTC)


class _ReachesTheStore:
    """The store (the worker's proxy in a try), checked on each use against a backend Updraft does not have."""

    _raw_store: Any

    @property
    def _store(self) -> Any:
        _refuse_other_backends()  # on use: a task that never touches its state is not failed for it
        return self._raw_store


class TaskStateStoreAccessor(_ReachesTheStore):
    """``context['task_state_store']``: the try's task instance's keys (shared by all its tries)."""

    def __init__(self, store: Any, key: TIKey) -> None:
        self._raw_store = store
        self._key = key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TaskStateStoreAccessor) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"<TaskStateStoreAccessor ti={self._key.label}>"

    def get(self, key: str, default: Any = None) -> Any:
        """The stored value, or ``default`` when the key is absent or expired."""
        entry = self._store.get_task_state(self._key, key, now=_now(self._store))
        return default if entry is None else entry.value

    def set(self, key: str, value: Any, *, retention: dt.timedelta | None = None) -> None:
        """Write or overwrite ``key``; ``retention``: a ``timedelta``, ``NEVER_EXPIRE``, or None (the default)."""
        value = _checked_value(value, "Task store", key)
        now = _now(self._store)
        self._store.set_task_state(self._key, key, value, expires_at=expires_at(retention, now), now=now)

    def delete(self, key: str) -> None:
        """Delete one key; a key that is not there is not an error."""
        self._store.delete_task_state(self._key, key)

    def clear(self) -> None:
        """Delete every key of this task instance."""
        self._store.clear_task_state(self._key)


class AssetStateStoreAccessor(_ReachesTheStore):
    """One asset's state, by its name (``Asset``, ``AssetNameRef``) or its URI (``AssetUriRef``)."""

    def __init__(self, store: Any, writer: TIKey, *, name: str | None = None, uri: str | None = None) -> None:
        if not name and not uri:
            raise ValueError("Either `name` or `uri` must be provided")
        self._raw_store = store
        self._writer = writer
        self._name = name
        self._uri = uri

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, AssetStateStoreAccessor)
                and (self._name, self._uri) == (other._name, other._uri))

    def __hash__(self) -> int:
        return hash((self._name, self._uri))

    def __repr__(self) -> str:
        if self._name is not None:
            return f"<AssetStateStoreAccessor name={self._name!r}>"
        return f"<AssetStateStoreAccessor uri={self._uri!r}>"

    def _asset(self) -> str:
        """The asset's name (its state is kept by name): an ``AssetUriRef``'s is looked up among the assets."""
        if self._name:
            return self._name
        return asset_named_by_uri(self._store, self._uri or "")

    def get(self, key: str, default: Any = None) -> Any:
        """The stored value, or ``default`` when the key is absent."""
        entry = self._store.get_asset_state(self._asset(), key)
        return default if entry is None else entry.value

    def set(self, key: str, value: Any) -> None:
        """Write or overwrite ``key`` (asset state never expires)."""
        value = _checked_value(value, "Asset store", key)
        self._store.set_asset_state(self._asset(), key, value, now=_now(self._store), writer=self._writer)

    def delete(self, key: str) -> None:
        self._store.delete_asset_state(self._asset(), key)

    def clear(self) -> None:
        """Delete every key of this asset."""
        self._store.clear_asset_state(self._asset())

    # The async variants Airflow has (the store call is short; it does not yield to the loop while it runs).
    async def aget(self, key: str, default: Any = None) -> Any:
        return self.get(key, default)

    async def aset(self, key: str, value: Any) -> None:
        self.set(key, value)

    async def adelete(self, key: str) -> None:
        self.delete(key)

    async def aclear(self) -> None:
        self.clear()


class AssetStateStoreAccessors:
    """``context['asset_state_store']``: an accessor per concrete inlet and outlet (``[MY_ASSET]``); with exactly
    one of them, its methods directly (``asset_state_store.get('watermark')``)."""

    def __init__(self, store: Any, writer: TIKey, inlets: list[Any], outlets: list[Any] | None = None) -> None:
        self._store = store
        self._writer = writer
        self._by_name: dict[str, AssetStateStoreAccessor] = {}
        self._by_uri: dict[str, AssetStateStoreAccessor] = {}
        # An AssetAlias inlet stands for the assets that had events through it (resolved on first use, as each
        # costs reads); an AssetAlias outlet emits events and holds no state, so it is skipped, as in Airflow.
        self._aliases = [inlet.name for inlet in inlets if isinstance(inlet, AssetAlias)]
        for asset in [*inlets, *(outlets or [])]:
            if isinstance(asset, (Asset, AssetNameRef)):
                self._add_name(asset.name)
            elif isinstance(asset, AssetUriRef) and asset.uri not in self._by_uri:
                self._by_uri[asset.uri] = AssetStateStoreAccessor(store, writer, uri=asset.uri)

    def _add_name(self, name: str) -> None:
        if name not in self._by_name:
            self._by_name[name] = AssetStateStoreAccessor(self._store, self._writer, name=name)

    def _resolved(self) -> AssetStateStoreAccessors:
        for alias in self._aliases:
            for name in assets_of_alias(self._store, alias):
                self._add_name(name)
        self._aliases = []
        return self

    def __getitem__(self, key: Asset | AssetNameRef | AssetUriRef) -> AssetStateStoreAccessor:
        self._resolved()
        try:
            if isinstance(key, (Asset, AssetNameRef)):
                return self._by_name[key.name]
            if isinstance(key, AssetUriRef):
                return self._by_uri[key.uri]
        except KeyError:
            raise KeyError(f"{key!r} is not in this task's inlets or outlets") from None
        raise TypeError(f"Expected Asset, AssetNameRef, or AssetUriRef; got {type(key).__name__}")

    def _single_accessor(self) -> AssetStateStoreAccessor:
        accessors = [*self._resolved()._by_name.values(), *self._by_uri.values()]
        if len(accessors) != 1:
            raise ValueError(f"Task has {len(accessors)} concrete inlets and outlets — use "
                             "context['asset_state_store'][MY_ASSET] to specify which")
        return accessors[0]

    def get(self, key: str, default: Any = None) -> Any:
        return self._single_accessor().get(key, default)

    def set(self, key: str, value: Any) -> None:
        self._single_accessor().set(key, value)

    def delete(self, key: str) -> None:
        self._single_accessor().delete(key)

    def clear(self) -> None:
        self._single_accessor().clear()

    async def aget(self, key: str, default: Any = None) -> Any:
        return await self._single_accessor().aget(key, default)

    async def aset(self, key: str, value: Any) -> None:
        await self._single_accessor().aset(key, value)

    async def adelete(self, key: str) -> None:
        await self._single_accessor().adelete(key)

    async def aclear(self) -> None:
        await self._single_accessor().aclear()

    def __repr__(self) -> str:
        parts = [f"name={k!r}" for k in self._resolved()._by_name] + [f"uri={k!r}" for k in self._by_uri]
        return f"<AssetStateStoreAccessors [{', '.join(parts)}]>"


def asset_named_by_uri(store: Any, uri: str) -> str:
    """The name of the active asset with ``uri`` (as Airflow's by-uri routes resolve it); KeyError when none."""
    for asset in store.list_assets():
        if asset.uri == uri:
            name: str = asset.name
            return name
    raise KeyError(f"Asset with uri={uri!r} not found")


def assets_of_alias(store: Any, alias: str) -> list[str]:
    """The assets an alias stands for: those with an event emitted through it (Airflow's alias-asset links)."""
    return sorted(asset.name for asset in store.list_assets()
                  if any(alias in event.source_aliases for event in store.list_asset_events(asset.asset_id)))


def granted_asset_names(serialized_task: Any, store: Any) -> frozenset[str]:
    """The assets whose state a try of ``serialized_task`` may reach: its concrete inlets and outlets and the
    assets of its alias inlets, by name (what :class:`AssetStateStoreAccessors` builds accessors for; the worker
    fences the proxy with it)."""
    names: set[str] = set()
    inlets = list(getattr(serialized_task, "inlets", None) or [])
    for tagged in [*inlets, *(getattr(serialized_task, "outlets", None) or [])]:
        data = getattr(tagged, "data", None)
        if not isinstance(data, dict):
            continue
        asset = data.get("asset") or data.get("asset_ref") or {}
        if "alias" in data and tagged in inlets:
            names.update(assets_of_alias(store, data["alias"]["name"]))
        elif "asset" in data or asset.get("name"):
            names.add(asset["name"])
        elif asset.get("uri"):
            with contextlib.suppress(KeyError):  # no asset has that URI: there is no state to reach through it
                names.add(asset_named_by_uri(store, asset["uri"]))
    return frozenset(names)


def install_state_stores(context: dict[str, Any], store: Any, key: TIKey, task: Any) -> None:
    """Put both accessors in the try's context."""
    context["task_state_store"] = TaskStateStoreAccessor(store, key)
    context["asset_state_store"] = AssetStateStoreAccessors(store, key, list(getattr(task, "inlets", None) or []),
                                                            list(getattr(task, "outlets", None) or []))


def clear_on_success(store: Any, key: TIKey) -> None:
    """``[state_store] clear_on_success`` (off by default, as in Airflow): a task instance that succeeded keeps no
    task state. Called by the worker once the success is recorded (Airflow's API server clears on SucceedTask)."""
    if airflow_config.get_bool("state_store", "clear_on_success", False):
        store.clear_task_state(key)
