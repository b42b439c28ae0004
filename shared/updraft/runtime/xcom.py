"""XComs at run time: push and pull over the store, XComArg resolution, and the lazy sequence of a mapped task.

Values are JSON (the store keeps JSON, large ones in S3), plus what Airflow's XCom serde gives back as it was
and DAGs commonly return: tuples (a named tuple as a tuple, as serde does), sets and frozensets, datetimes
(pendulum's too), dates, times, timedeltas and ObjectStoragePaths, stored tagged the way serde tags them
(``{"__classname__": ..., "__version__": ..., "__data__": ...}``) and rebuilt when pulled, at any depth. Any
other value that is not JSON-serializable fails the task with a message naming the task and key, instead of a
serializer traceback. ``None`` return values are not pushed (Airflow pushes only a result that is not None),
which is also how a mapped upstream's instances that returned nothing drop out of the lazy sequence a reducing
task receives.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from updraft.model.records import UNMAPPED, TIKey
from updraft.model.serde_tags import CLASSNAME, COLLECTIONS, DATA, VERSION, is_tagged
from updraft.sdk.exceptions import AirflowException, UnmappableXComTypePushed, XComNotFound
from updraft.sdk.param import NOTSET
from updraft.sdk.taskgroup import closest_mapped_group
from updraft.sdk.xcom_arg import XCOM_RETURN_KEY, ConcatXComArg, MapXComArg, PlainXComArg, XComArg, ZipXComArg
from updraft.secrets.masker import redact


class XComSerializationError(AirflowException, TypeError):
    """A pushed value the store cannot keep (not JSON); the try fails with this message."""


_PENDULUM_DATETIME = "pendulum.datetime.DateTime"
_OBJECT_STORAGE_PATH = "airflow.sdk.io.path.ObjectStoragePath"  # serde's name for it, with its serialize() data
# serde's builtin collections (its ``serializers.builtin``, version 1): a named tuple is tagged as a plain tuple.
_COLLECTIONS: dict[str, type] = dict(zip(COLLECTIONS, (tuple, set, frozenset), strict=True))


def _encode_one(value: Any) -> Any:
    """A datetime-like value as its tagged JSON form; anything else unchanged."""
    if isinstance(value, dt.datetime):
        data: dict[str, Any] = {"iso": value.isoformat()}
        name = getattr(getattr(value, "timezone", None), "name", None)  # pendulum keeps its zone's name
        if type(value).__module__.startswith("pendulum") and name:
            data["tz"] = name
            return {CLASSNAME: _PENDULUM_DATETIME, VERSION: 1, DATA: data}
        return {CLASSNAME: "datetime.datetime", VERSION: 1, DATA: data}
    if isinstance(value, dt.date):
        return {CLASSNAME: "datetime.date", VERSION: 1, DATA: value.isoformat()}
    if isinstance(value, dt.time):
        return {CLASSNAME: "datetime.time", VERSION: 1, DATA: value.isoformat()}
    if isinstance(value, dt.timedelta):
        return {CLASSNAME: "datetime.timedelta", VERSION: 1,
                DATA: [value.days, value.seconds, value.microseconds]}
    paths = sys.modules.get("updraft.sdk.io.path")  # loaded once DAG code made a path: none to encode before
    if paths is not None and isinstance(value, paths.ObjectStoragePath):
        return {CLASSNAME: _OBJECT_STORAGE_PATH, VERSION: paths.ObjectStoragePath.__version__,
                DATA: value.serialize()}
    return value


def encode_value(value: Any) -> Any:
    """``value`` in the form the store keeps: tuples, sets and datetime-likes tagged, at any depth."""
    if isinstance(value, dict):
        return {k: encode_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encode_value(v) for v in value]
    if isinstance(value, (tuple, set, frozenset)):
        items = [encode_value(v) for v in value]
        if isinstance(value, tuple):
            return {CLASSNAME: "builtins.tuple", VERSION: 1, DATA: items}
        items.sort(key=lambda item: json.dumps(item, sort_keys=True, default=str))  # a set is stored one way
        name = "builtins.frozenset" if isinstance(value, frozenset) else "builtins.set"
        return {CLASSNAME: name, VERSION: 1, DATA: items}
    return _encode_one(value)


def _decode_one(value: dict) -> Any:
    name, data = value[CLASSNAME], value[DATA]
    if name in _COLLECTIONS and isinstance(data, list):
        return _COLLECTIONS[name](decode_value(v) for v in data)
    if name == "datetime.datetime" and isinstance(data, dict):
        return dt.datetime.fromisoformat(data["iso"])
    if name == _PENDULUM_DATETIME and isinstance(data, dict):
        import pendulum

        return pendulum.instance(dt.datetime.fromisoformat(data["iso"])).in_timezone(data["tz"])
    if name == "datetime.date" and isinstance(data, str):
        return dt.date.fromisoformat(data)
    if name == "datetime.time" and isinstance(data, str):
        return dt.time.fromisoformat(data)
    if name == "datetime.timedelta" and isinstance(data, list):
        return dt.timedelta(days=data[0], seconds=data[1], microseconds=data[2])
    if name == _OBJECT_STORAGE_PATH and isinstance(data, dict):
        # lazy: cold start (ObjectStoragePath and its S3 store only for a path XCom)
        from updraft.sdk.io.path import ObjectStoragePath

        return ObjectStoragePath.deserialize(dict(data), value[VERSION])
    return value  # a user's dict that only looks tagged


def decode_value(value: Any) -> Any:
    """The value a pushed one stands for (the inverse of ``encode_value``)."""
    if isinstance(value, dict):
        if is_tagged(value):
            return _decode_one(value)
        return {k: decode_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    return value


def _may_be_tagged(value: Any) -> bool:
    """Whether decoding could change ``value`` (a cheap walk that stops at the first dict)."""
    if isinstance(value, dict):
        return True
    if isinstance(value, list):
        return any(isinstance(v, (dict, list)) and _may_be_tagged(v) for v in value)
    return False


def check_json(value: Any, *, task_id: str, key: str) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise XComSerializationError(
            f"XCom {key!r} of task {task_id!r} is not JSON-serializable ({type(value).__name__}): {exc}. "
            "Return or push JSON values (str, int, float, bool, None, lists and dicts of them).") from None


_MISSING = object()


def _decoded(value: Any) -> Any:
    return decode_value(value) if _may_be_tagged(value) else value


class XComClient:
    """One task instance's view of the run's XComs (``ti.xcom_push`` / ``ti.xcom_pull`` delegate here)."""

    def __init__(self, store: Any, key: TIKey, now_fn: Callable[[], dt.datetime]) -> None:
        self.store = store
        self.key = key
        self.now_fn = now_fn

    def push(self, key: str, value: Any) -> None:
        value = encode_value(value)  # tuples, sets, datetimes and friends, tagged; anything else fails below
        check_json(value, task_id=self.key.task_id, key=key)
        self.store.put_xcom(self.key, key, value, now=self.now_fn(), shown=redact(value))

    def values_by_index(self, task_id: str, key: str = XCOM_RETURN_KEY, *, dag_id: str | None = None,
                        run_id: str | None = None) -> list[tuple[int, Any]]:
        """(map_index, value) of every instance of ``task_id`` that pushed ``key``, in map_index order."""
        found = self.store.list_xcoms(dag_id or self.key.dag_id, run_id or self.key.run_id, task_id)
        return sorted(((index, _decoded(value)) for (index, k), value in found.items() if k == key),
                      key=lambda pair: pair[0])

    def get_one(self, task_id: str, key: str, map_index: int | None, *, dag_id: str | None = None,
                run_id: str | None = None, default: Any = None) -> Any:
        ti_key = TIKey(dag_id or self.key.dag_id, run_id or self.key.run_id, task_id,
                       UNMAPPED if map_index is None else map_index)
        found = self.store.get_xcom(ti_key, key, _MISSING)
        return default if found is _MISSING else _decoded(found)

    def pull(self, task_ids: str | Sequence[str] | None = None, dag_id: str | None = None,
             key: str = XCOM_RETURN_KEY, include_prior_dates: bool = False, *, map_indexes: Any = NOTSET,
             default: Any = None, run_id: str | None = None) -> Any:
        """Airflow 3's ``RuntimeTaskInstance.xcom_pull``.

        Without ``map_indexes``: every map index of each task (one value for a single task that has one);
        with them: exactly those. ``include_prior_dates``: a value missing in this run comes from the latest
        earlier run (by logical date) that has it. One difference: where Airflow returns None for an XCom that
        does not exist, ``default`` is returned (Airflow ignores ``default`` in that branch).
        """
        single_task = isinstance(task_ids, (str, type(None)))
        single_index = isinstance(map_indexes, (int, type(None)))
        ids = [self.key.task_id] if task_ids is None else [task_ids] if isinstance(task_ids, str) else list(task_ids)
        dag_id = dag_id or self.key.dag_id
        run_ids = self._run_ids(dag_id, run_id or self.key.run_id, include_prior_dates)
        if map_indexes is NOTSET:
            pulled: list[Any] = []
            for task_id in ids:
                values: list[Any] = []
                for rid in run_ids:
                    values = [v for _, v in self.values_by_index(task_id, key, dag_id=dag_id, run_id=rid)]
                    if values:
                        break
                pulled.extend(values if values else [default])
            if single_task and len(pulled) == 1:
                return pulled[0]
            return pulled
        indexes = [map_indexes] if single_index else list(map_indexes)
        pulled = []
        for task_id in ids:
            for index in indexes:
                value = None
                for rid in run_ids:
                    value = self.get_one(task_id, key, index, dag_id=dag_id, run_id=rid)
                    if value is not None:
                        break
                pulled.append(default if value is None else value)
        return pulled[0] if single_task and single_index else pulled

    def _run_ids(self, dag_id: str, run_id: str, include_prior_dates: bool) -> list[str]:
        """This run, then (with ``include_prior_dates``) earlier ones, latest logical date first."""
        if not include_prior_dates:
            return [run_id]
        current = self.store.get_run(dag_id, run_id)
        if current is None or current.logical_date is None:
            return [run_id]
        earlier = sorted((r for r in self.store.list_runs(dag_id)
                          if r.run_id != run_id and r.logical_date is not None
                          and r.logical_date <= current.logical_date),
                         key=lambda r: r.logical_date, reverse=True)
        return [run_id, *(r.run_id for r in earlier)]


class LazyXComSequence(Sequence):
    """All results of a mapped task, in map_index order, fetched on first use (Airflow's LazyXComSequence)."""

    def __init__(self, client: XComClient, task_id: str, key: str = XCOM_RETURN_KEY) -> None:
        self._client = client
        self._task_id = task_id
        self._key = key
        self._values: list[Any] | None = None

    def _all(self) -> list[Any]:
        if self._values is None:
            self._values = [v for _, v in self._client.values_by_index(self._task_id, self._key)]
        return self._values

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._all())

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyXComSequence([{len(self)} items])"


class _MapResult(Sequence):
    """``xcom_arg.map(f)`` resolved: items transformed on access, so a mapped instance pays for its own only."""

    def __init__(self, value: Sequence | Mapping, callables: list[Callable[[Any], Any]]) -> None:
        self.value = list(value.items()) if isinstance(value, Mapping) else value
        self.callables = callables

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        item = self.value[index]
        for f in self.callables:
            item = f(item)
        return item

    def __len__(self) -> int:
        return len(self.value)


def resolve_xcom_arg(arg: XComArg, context: Mapping[str, Any]) -> Any:
    """The value an XComArg stands for in this try (Airflow's ``XComArg.resolve``)."""
    client: XComClient = context["ti"].xcom_client
    if isinstance(arg, PlainXComArg):
        task = arg.operator
        group = closest_mapped_group(task)
        if group is not None and _in_group(task, client.key.task_id, group):
            map_index = client.key.map_index  # the same index of the same mapped task group
        elif getattr(task, "is_mapped", False) or group is not None:
            return LazyXComSequence(client, task.task_id, arg.key)
        else:
            map_index = UNMAPPED
        value = client.get_one(task.task_id, arg.key, map_index, default=NOTSET)
        if value is not NOTSET:
            return value
        if arg.key == XCOM_RETURN_KEY or getattr(task, "multiple_outputs", False):
            return None
        raise XComNotFound(f"XComArg result from {task.task_id} at {client.key.dag_id} with key={arg.key!r} "
                           "is not found!")
    if isinstance(arg, MapXComArg):
        value = resolve_xcom_arg(arg.arg, context)
        if not isinstance(value, (Sequence, Mapping)) or isinstance(value, str):
            raise ValueError(f"XCom map expects sequence or dict, not {type(value).__name__}")
        return _MapResult(value, arg.callables)
    if isinstance(arg, ZipXComArg):
        values = [_as_sequence(resolve_xcom_arg(a, context)) for a in arg.args]
        if arg.fillvalue is NOTSET:
            return list(zip(*values, strict=False))
        from itertools import zip_longest

        return list(zip_longest(*values, fillvalue=arg.fillvalue))
    if isinstance(arg, ConcatXComArg):
        out: list[Any] = []
        for a in arg.args:
            out.extend(_as_sequence(resolve_xcom_arg(a, context)))
        return out
    raise TypeError(f"cannot resolve {type(arg).__name__}")


def _in_group(task: Any, task_id: str, group: Any) -> bool:
    """Whether the running task ``task_id`` is in the mapped task group ``group`` too."""
    current = task.dag.task_dict.get(task_id) if task.has_dag() else None
    return current is not None and closest_mapped_group(current) is group


def _as_sequence(value: Any) -> Sequence:
    if isinstance(value, Mapping):
        return list(value.items())
    if isinstance(value, Sequence) and not isinstance(value, str):
        return value
    raise ValueError(f"XCom zip/concat expects sequences or dicts, not {type(value).__name__}")


def resolve_args(value: Any, context: Mapping[str, Any]) -> Any:
    """``value`` with every XComArg inside (lists, tuples, dicts, sets) replaced by its value."""
    if isinstance(value, XComArg):
        return resolve_xcom_arg(value, context)
    if isinstance(value, list):
        return [resolve_args(v, context) for v in value]
    if isinstance(value, tuple):
        return tuple(resolve_args(v, context) for v in value)
    if isinstance(value, dict):
        return {k: resolve_args(v, context) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return type(value)(resolve_args(v, context) for v in value)
    return value


class XComForMappingNotPushed(AirflowException):
    """A task whose return value a downstream task maps over returned nothing (Airflow's exception)."""

    def __str__(self) -> str:
        return "did not push XCom for task mapping"


def push_result(task: Any, value: Any, client: XComClient, *, maps_downstream: bool,
                is_mapped: bool = False) -> int | None:
    """Push a task's return value as Airflow 3 does; returns ``xcom_length`` for the scheduler's mapping.

    Nothing is pushed for None or ``do_xcom_push=False``, which fails an unmapped task a downstream task maps
    over (``XComForMappingNotPushed``); such a task must return a list or dict (``UnmappableXComTypePushed``).
    ``multiple_outputs`` also pushes each key of the returned dict.
    """
    if not getattr(task, "do_xcom_push", True):
        value = None
    must_map = maps_downstream and not is_mapped
    if value is None:
        if must_map:
            raise XComForMappingNotPushed()
        return None
    if getattr(task, "multiple_outputs", False):
        if not isinstance(value, Mapping):
            raise TypeError(f"Returned output was type {type(value)} expected dictionary for multiple_outputs")
        for k in value:
            if not isinstance(k, str):
                raise TypeError(f"Returned dictionary keys must be strings when using multiple_outputs, found "
                                f"{k} ({type(k)}) instead")
        for k, v in value.items():
            client.push(k, v)
    client.push(XCOM_RETURN_KEY, value)
    if isinstance(value, (list, tuple, dict)):  # Airflow's mappable values (ordered collections), by length
        return len(value)
    if must_map:
        raise UnmappableXComTypePushed(f"unmappable return type {type(value).__qualname__!r}")
    return None
