"""The asset side of a try: ``outlet_events``, ``inlet_events`` and ``triggering_asset_events`` in the context,
and the outlet events a successful try emits (Airflow's ``OutletEventAccessors``, ``InletEventsAccessors`` and
``TriggeringAssetEventsAccessor``, from ``airflow.sdk.execution_time.context``).

Store access stays in the functions here (``install_asset_context``, ``keep_outlet_events``): the accessors
handed to task code get only a reader function, never the store.
"""

from __future__ import annotations

import collections
import datetime as dt
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from updraft.model.identifiers import ID_LEN
from updraft.model.records import DagRun, TIKey
from updraft.model.states import DagRunType
from updraft.sdk.assets import Asset, AssetAlias, AssetNameRef, AssetRef, AssetUriRef
from updraft.store.assets import AssetEvent, asset_id_of
from updraft.store.attributes import ts

EventReader = Callable[[str], list[AssetEvent]]  # asset name -> its events, oldest first


@dataclass
class AssetAliasEvent:
    source_alias_name: str
    dest_asset: Asset
    extra: dict[str, Any]


@dataclass
class OutletEventAccessor:
    """``outlet_events[asset]``: set ``extra``; ``outlet_events[alias].add(asset, extra=...)`` emits through it."""

    key: Asset | AssetAlias
    extra: dict[str, Any] = field(default_factory=dict)
    asset_alias_events: list[AssetAliasEvent] = field(default_factory=list)
    partition_keys: set[str] = field(default_factory=set)

    def add_partitions(self, keys: str | list[str]) -> None:
        """Emit the asset once per partition key (Airflow 3.3) instead of once for the run's own partition."""
        if isinstance(self.key, AssetAlias):
            raise TypeError("add_partitions() is not supported on asset alias outlet events; partition keys can "
                            "only be attached to a concrete asset.")
        for key in [keys] if isinstance(keys, str) else keys:
            if not key.strip():
                raise ValueError(f"partition_key must not be empty or whitespace-only; got {key!r}.")
            if len(key) > ID_LEN:
                raise ValueError(f"partition_key must be at most {ID_LEN} characters; "
                                 f"got {len(key)}.")
            self.partition_keys.add(key)

    def add(self, asset: Asset | AssetRef, extra: dict[str, Any] | None = None) -> None:
        if not isinstance(self.key, AssetAlias):
            return  # as Airflow: add() means something only on an alias
        if isinstance(asset, AssetRef):
            name = getattr(asset, "name", None) or getattr(asset, "uri", None)
            asset = Asset(name=name, uri=getattr(asset, "uri", None) or name)
        self.asset_alias_events.append(AssetAliasEvent(self.key.name, asset, dict(extra or {})))


def _key(key: Any) -> tuple[str, str]:
    if isinstance(key, Asset):
        return ("asset", key.name)
    if isinstance(key, AssetAlias):
        return ("alias", key.name)
    if isinstance(key, AssetNameRef):
        return ("asset", key.name)
    if isinstance(key, AssetUriRef):
        return ("asset", key.uri)
    raise TypeError(f"Key should be either an asset or an asset alias, not {type(key)}")


class OutletEventAccessors(Mapping[Any, OutletEventAccessor]):
    def __init__(self) -> None:
        self._dict: dict[tuple[str, str], OutletEventAccessor] = {}

    def __getitem__(self, key: Any) -> OutletEventAccessor:
        hashable = _key(key)
        if hashable not in self._dict:
            obj = key if isinstance(key, Asset | AssetAlias) else Asset(name=hashable[1])
            self._dict[hashable] = OutletEventAccessor(key=obj)
        return self._dict[hashable]

    def __iter__(self) -> Iterator[Any]:
        return (a.key for a in self._dict.values())

    def __len__(self) -> int:
        return len(self._dict)

    def for_asset(self, *, name: str | None = None, uri: str | None = None) -> OutletEventAccessor:
        return self[Asset(name=name, uri=uri)]

    def for_asset_alias(self, *, name: str) -> OutletEventAccessor:
        return self[AssetAlias(name=name)]


@dataclass(frozen=True)
class AssetEventAsset:
    name: str
    uri: str
    group: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AssetEventResult:
    """One event as task code sees it (Airflow's ``AssetEventResult``)."""

    id: int
    asset: AssetEventAsset
    extra: dict[str, Any]
    timestamp: dt.datetime
    source_dag_id: str | None
    source_task_id: str | None
    source_run_id: str | None
    source_map_index: int
    source_aliases: list[AssetAlias]

    @classmethod
    def of(cls, event: AssetEvent) -> AssetEventResult:
        return cls(id=event.event_id, asset=AssetEventAsset(event.name, event.uri, event.group), extra=event.extra,
                   timestamp=event.timestamp, source_dag_id=event.source_dag_id, source_task_id=event.source_task_id,
                   source_run_id=event.source_run_id, source_map_index=event.source_map_index,
                   source_aliases=[AssetAlias(name=a) for a in event.source_aliases])


class InletEventsAccessor(Sequence[AssetEventResult]):
    """The events of one asset (or alias), oldest first; read on first use."""

    def __init__(self, load: Callable[[], list[AssetEvent]]) -> None:
        self._load = load
        self._events: list[AssetEventResult] | None = None

    def _all(self) -> list[AssetEventResult]:
        if self._events is None:
            self._events = [AssetEventResult.of(e) for e in self._load()]
        return self._events

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())


class InletEventsAccessors(Mapping[Any, InletEventsAccessor]):
    """``inlet_events[asset]``: the asset's events, oldest first (``[-1]`` is the newest)."""

    def __init__(self, inlets: list[Any], read: EventReader, read_alias: EventReader) -> None:
        self._inlets = inlets
        self._read = read
        self._read_alias = read_alias

    def __getitem__(self, key: Any) -> InletEventsAccessor:
        if isinstance(key, int):
            key = self._inlets[key]
        kind, name = _key(key)
        if kind == "alias":
            return InletEventsAccessor(lambda: self._read_alias(name))
        return InletEventsAccessor(lambda: self._read(name))

    def __iter__(self) -> Iterator[Any]:
        return iter(self._inlets)

    def __len__(self) -> int:
        return len(self._inlets)

    def for_asset(self, *, name: str | None = None, uri: str | None = None) -> InletEventsAccessor:
        return self[Asset(name=name, uri=uri)]

    def for_asset_alias(self, *, name: str) -> InletEventsAccessor:
        return self[AssetAlias(name=name)]


class TriggeringAssetEventsAccessor(Mapping[Any, Sequence[AssetEventResult]]):
    """The events that triggered the run, by asset (and by the aliases they came through)."""

    def __init__(self, events: list[AssetEvent]) -> None:
        coll: dict[tuple[str, str], list[AssetEventResult]] = collections.defaultdict(list)
        self._objects: dict[tuple[str, str], Any] = {}
        for event in events:
            result = AssetEventResult.of(event)
            coll[("asset", event.name)].append(result)
            self._objects.setdefault(("asset", event.name), Asset(name=event.name, uri=event.uri, group=event.group))
            for alias in event.source_aliases:
                coll[("alias", alias)].append(result)
                self._objects.setdefault(("alias", alias), AssetAlias(name=alias))
        self._events = dict(coll)

    def __getitem__(self, key: Any) -> Sequence[AssetEventResult]:
        if isinstance(key, str):  # Airflow 2's templates index by URI
            for (kind, _), obj in self._objects.items():
                if kind == "asset" and obj.uri == key:
                    key = obj
                    break
        return self._events[_key(key)]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._objects[k] for k in self._events)

    def __len__(self) -> int:
        return len(self._events)


def install_asset_context(context: dict[str, Any], store: Any, task: Any, run: DagRun) -> None:
    """Put the three accessors in the try's context."""

    def read(name: str) -> list[AssetEvent]:
        return list(store.list_asset_events(asset_id_of(name)))

    def read_alias(name: str) -> list[AssetEvent]:
        events = [e for a in store.list_assets() for e in store.list_asset_events(a.asset_id)
                  if name in e.source_aliases]
        return sorted(events, key=lambda e: (e.timestamp, e.event_id))

    context["outlet_events"] = OutletEventAccessors()
    context["inlet_events"] = InletEventsAccessors(list(getattr(task, "inlets", None) or []), read, read_alias)
    triggering = (store.get_triggering_events(run.dag_id, run.run_id)
                  if str(run.run_type) == DagRunType.ASSET_TRIGGERED.value else [])
    context["triggering_asset_events"] = TriggeringAssetEventsAccessor(triggering)


def outlet_event_specs(task: Any, accessors: OutletEventAccessors, run: DagRun | None = None) -> list[dict[str, Any]]:
    """What a successful try emits: one event per outlet asset (with its ``extra``), or one per partition key
    ``add_partitions`` named, and one per alias ``add``. An event without its own key is for the run's partition
    (and carries the run's partition date), as Airflow's ``TaskInstance.register_asset_changes``."""
    specs: list[dict[str, Any]] = []
    for outlet in getattr(task, "outlets", None) or []:
        if isinstance(outlet, AssetAlias):
            for event in accessors[outlet].asset_alias_events:
                asset = event.dest_asset
                specs.append(_for_run({"name": asset.name, "uri": asset.uri, "group": asset.group,
                                       "extra": event.extra, "aliases": [event.source_alias_name]}, run))
            continue
        spec: dict[str, Any]
        if isinstance(outlet, Asset):
            spec = {"name": outlet.name, "uri": outlet.uri, "group": outlet.group}
        elif isinstance(outlet, AssetRef):
            name = getattr(outlet, "name", None) or getattr(outlet, "uri", "")
            spec = {"name": name, "uri": getattr(outlet, "uri", None) or name, "group": "asset"}
        else:
            continue
        accessor = accessors[outlet] if _key(outlet) in accessors._dict else None
        spec["extra"] = dict(accessor.extra) if accessor else {}
        keys = sorted(accessor.partition_keys) if accessor else []
        specs += [_for_run({**spec, "partition_key": key}, run) for key in keys] or [_for_run(spec, run)]
    return specs


def _for_run(spec: dict[str, Any], run: DagRun | None) -> dict[str, Any]:
    """The event's partition: its own key, else the run's; the run's date only when the key is the run's."""
    run_key = run.partition_key if run is not None else None
    spec.setdefault("partition_key", run_key)
    if spec["partition_key"] is None:
        del spec["partition_key"]
    elif run is not None and spec["partition_key"] == run_key and run.partition_date is not None:
        spec["partition_date"] = ts(run.partition_date)
    return spec


def keep_outlet_events(store: Any, key: TIKey, try_number: int, task: Any, context: Mapping[str, Any],
                       now: dt.datetime) -> None:
    """Store what this try emits once its success is recorded (``publish_outlet_events`` emits it)."""
    accessors = context.get("outlet_events")
    if not isinstance(accessors, OutletEventAccessors):
        return
    run = context.get("dag_run")
    specs = outlet_event_specs(task, accessors, run if isinstance(run, DagRun) else None)
    if specs:
        store.put_outlet_events(key, try_number, specs, now)


def emits_assets(serialized_task: Any) -> bool:
    """Whether the task has outlets: only then does its success cost a read of what it kept."""
    return bool(getattr(serialized_task, "outlets", None))


def publish_and_nudge(store: Any, scheduler: Any, key: TIKey, try_number: int, now: dt.datetime) -> list[DagRun]:
    """Emit a succeeded try's outlet events, then create (and start) the runs they complete at once, so a
    consumer does not wait for the next scheduler tick. Idempotent: a redelivered dispatch may call it again."""
    # lazy: cold start (the worker's scheduling of asset events only when a task has outlets)
    from updraft.scheduling import create_asset_triggered_runs, publish_outlet_events

    consumers = publish_outlet_events(store, key, try_number)
    if not consumers:
        return []
    runs = create_asset_triggered_runs(store, scheduler.dag, now=now, dag_ids=sorted(consumers))
    for run in runs:
        scheduler.schedule_run(run.dag_id, run.run_id)
    return runs
