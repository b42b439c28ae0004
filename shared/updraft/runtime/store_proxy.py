"""The store as a try's child process reaches it: an allow-list of calls the worker makes for it, fenced to the try.

User code (the DAG file, operators, callbacks) runs in a child process that never held Updraft's credentials
(``supervisor``/``task_process``). Everything the runtime in that child needs from the store goes through this
module, as Airflow 3's task runner reaches the API server only through its supervisor (``comms.py``'s message set):
the child's :class:`StoreProxy` sends ``[method, args]`` as JSON over its socket, the worker answers with
:func:`serve_call`, which runs the method's handler in :data:`ALLOWED` against the real store.

The allow-list is :data:`ALLOWED`, in this one place. Each handler decodes its JSON arguments and checks they are
within the try's :class:`TryScope`:

- writes are the try's own: XComs of its own task instance (``put_xcom``, ``clear_xcoms``), its rendered fields
  fenced by its try token (``set_rendered_fields``: held by the worker for the try's end to carry,
  ``rendered_fields.HeldFields``, where the scope has a holder);
- reads of the run's DAG version, of runs and XComs are open, as in Airflow 3 (``xcom_pull`` may name another DAG;
  Airflow's execution API allows it too);
- Variables and Connections: the metastore (``get_variable``/``set_variable``/``delete_variable``/
  ``get_connection``) and the configured secrets backend (``backend_variable``/``backend_connection``), which is
  read with the worker's credentials, so the DAG-code role needs no secrets permission;
- ``now``: the worker's clock (a try's timestamps are the worker's, as when it ran in-process);
- assets: reads of asset events (``inlet_events``, ``triggering_asset_events``) are open; the try keeps its own
  outlet events (``put_outlet_events``, its task instance and try number), which the worker emits after it
  records the success;
- state stores (Airflow 3.3's AIP-103): the try reads and writes the task state of its own task instance only
  (``*_task_state``; every try and map index of the instance has its own key, the expiry is checked on the
  worker's clock) and the asset state of its task's inlets and outlets only (``*_asset_state``, the names read
  from the run's DAG version, the writer stamped by the worker); callbacks and triggers only read them;
- other DAGs: ``cross_dag`` runs one of :data:`CROSS_DAG_CALLS` on a ``runtime.cross_dag.CrossDag`` in the worker,
  what Airflow's execution API lets a task do (``TriggerDagRunOperator`` triggers or clears a run,
  ``ExternalTaskSensor`` reads runs and task states): the run is created or cleared by the REST API's own code
  and the worker nudges the scheduler (its ``hand_off``) for a triggered run;
- callbacks run for a callback request and a trigger's look (``TryScope.writes`` False) read as a try does and
  set Variables, but write no task instance's data and trigger no run: Airflow's DAG processor and triggerer,
  where those run, offer reads and Variables only.

To let the child do something new with the store (asset events, trigger records, deferrals), add a handler to
``ALLOWED`` that checks its scope and the matching method on ``StoreProxy``; ``test_store_proxy`` checks they agree.
Replies travel as pickles from the worker to the child (records and SerializedDAGs as they are); requests from the
child are JSON only, so nothing the child sends can run code in the worker.
"""

from __future__ import annotations

import datetime as dt
import json
import pickle
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from updraft.model.records import TIKey
from updraft.runtime.try_dag import TryDag, try_dag
from updraft.store.api import Store

if TYPE_CHECKING:
    from updraft.runtime.rendered_fields import HeldFields


class Relayed(Exception):
    """Raised by a handler whose exception the child must see as it is (``DagRunAlreadyExists`` for a
    ``TriggerDagRunOperator``): the reply carries the exception itself, pickled, and the child raises it."""

    def __init__(self, exc: Exception) -> None:
        super().__init__(str(exc))
        self.exc = exc


class ScopeError(PermissionError):
    """A call the try may not make (another try's XCom, an unknown method): refused, and the try sees it raised."""


@dataclass
class TryScope:
    """What one child process may touch: its try (key and token) and the worker's clock and secrets backend."""

    key: TIKey
    try_id: str
    now_fn: Callable[[], dt.datetime]
    backend: Any = None  # the configured secrets backend (SecretsBackend), read in the worker
    try_number: int | None = None  # the try's number (its outlet events are kept under it)
    nudge: Callable[[str, str], Any] | None = None  # the worker's hand-off: a run the try triggered starts now
    # False for callbacks and triggers, which read as a try does but write no task instance's data and trigger
    # no run (Airflow's DAG processor and triggerer offer them reads and Variables only).
    writes: bool = True
    # The assets whose state the try may reach (its task's inlets and outlets, by name): read from the run's DAG
    # version on the first asset state call.
    state_assets: frozenset[str] | None = None
    rendered: HeldFields | None = None  # holds the try's rendered fields for its end (None: written at once)


def _ti_key(raw: Any) -> TIKey:
    if not (isinstance(raw, list) and len(raw) == 4 and all(isinstance(part, str) for part in raw[:3])
            and isinstance(raw[3], int)):
        raise ScopeError(f"not a task instance key: {raw!r}")
    return TIKey(raw[0], raw[1], raw[2], raw[3])


def _own(scope: TryScope, raw: Any) -> TIKey:
    key = _ti_key(raw)
    if not scope.writes:
        raise ScopeError(f"callbacks and triggers may not write task instance data (asked for {key.label})")
    if key != scope.key:
        raise ScopeError(f"this try ({scope.key.label}) may not write task instance {key.label}")
    return key


def _text(raw: Any, what: str) -> str:
    if not isinstance(raw, str):
        raise ScopeError(f"{what} must be a string, got {type(raw).__name__}")
    return raw


def _optional_int(raw: Any) -> int | None:
    if raw is not None and not isinstance(raw, int):
        raise ScopeError(f"expected an integer or null, got {raw!r}")
    return raw


def _put_xcom(store: Store, scope: TryScope, key: Any, xcom_key: Any, value: Any, shown: Any) -> None:
    store.put_xcom(_own(scope, key), _text(xcom_key, "an XCom key"), value, now=scope.now_fn(), shown=shown)


def _set_rendered_fields(store: Store, scope: TryScope, key: Any, try_id: Any, fields: Any) -> bool:
    if try_id != scope.try_id or not isinstance(fields, dict):
        raise ScopeError(f"this try may only record its own rendered fields (try token {scope.try_id!r})")
    own = _own(scope, key)
    if scope.rendered is not None:
        scope.rendered.hold(fields)
        return True
    return store.set_rendered_fields(own, try_id=scope.try_id, rendered_fields=fields)


def _get_xcom(store: Store, scope: TryScope, key: Any, xcom_key: Any) -> Any:
    return store.get_xcom(_ti_key(key), _text(xcom_key, "an XCom key"), _MISSING_REPLY)


def _backend_lookup(scope: TryScope, method: str, name: Any) -> str | None:
    if scope.backend is None:
        return None
    value = getattr(scope.backend, method)(_text(name, "a variable key or connection id"))
    return None if value is None else str(value)


def _send_email(store: Store, scope: TryScope, to: Any, subject: Any, html: Any, cc: Any, bcc: Any,
                charset: Any) -> str:
    """An alert or ``send_email`` from the try, through the environment's sender (SES, the worker's grant)."""
    # lazy: the task child imports only what its job runs (email only when a task sends one)
    from updraft.notifications.ses import EmailNotConfigured, configured_sender

    sender = configured_sender()
    if sender is None:
        raise EmailNotConfigured()
    addresses = [to, cc, bcc]
    if not all(isinstance(group, list) and all(isinstance(a, str) for a in group) for group in addresses):
        raise ScopeError("email recipients must be lists of addresses")
    return sender.send(to=to, subject=_text(subject, "a subject"), html=_text(html, "a body"), cc=cc, bcc=bcc,
                       charset=_text(charset, "a charset"))


def _previous_successful_run(store: Store, scope: TryScope, dag_id: Any, logical_date: Any) -> Any:
    """The context's ``prev_*_success``: from the worker's cache, so a child does not read 50 runs per try."""
    # lazy: the task child imports only what its job runs (the context's run lookups on request)
    from updraft.runtime.context import previous_successful_run_before

    return previous_successful_run_before(store, _text(dag_id, "dag_id"),
                                          dt.datetime.fromisoformat(_text(logical_date, "a logical date")))


def _asset_id(raw: Any) -> int:
    if not isinstance(raw, int) or isinstance(raw, bool):
        raise ScopeError(f"not an asset id: {raw!r}")
    return raw


def _put_outlet_events(store: Store, scope: TryScope, key: Any, try_number: Any, events: Any) -> None:
    if scope.try_number is None or try_number != scope.try_number:
        raise ScopeError(f"this try (number {scope.try_number}) may only keep its own outlet events")
    if not (isinstance(events, list) and all(isinstance(event, dict) for event in events)):
        raise ScopeError("outlet events must be a list of objects")
    store.put_outlet_events(_own(scope, key), scope.try_number, events, scope.now_fn())


STATE_KEY_MAX = 512


def _state_key(raw: Any) -> str:
    if not isinstance(raw, str) or not raw or len(raw) > STATE_KEY_MAX:
        raise ScopeError(f"a state store key must be a non-empty string of at most {STATE_KEY_MAX} characters "
                         f"(Airflow's column), got {raw[:80] if isinstance(raw, str) else raw!r}")
    return raw


def _own_state(scope: TryScope, raw: Any, *, write: bool) -> TIKey:
    """The try's own task instance: the only one whose task state it may read or write (Airflow's ``ti:self``)."""
    if write:
        return _own(scope, raw)
    key = _ti_key(raw)
    if key != scope.key:
        raise ScopeError(f"this try ({scope.key.label}) may not read the task state of {key.label}")
    return key


def _get_task_state(store: Store, scope: TryScope, key: Any, state_key: Any) -> Any:
    return store.get_task_state(_own_state(scope, key, write=False), _state_key(state_key),
                                         now=scope.now_fn())


def _set_task_state(store: Store, scope: TryScope, key: Any, state_key: Any, value: Any, expires_at: Any) -> None:
    own = _own_state(scope, key, write=True)
    if value is None:
        raise ScopeError("Cannot set value as None")
    expiry = None if expires_at is None else _date(expires_at)
    if expiry is not None and expiry.tzinfo is None:
        raise ScopeError(f"a state store expiry must carry its time zone, got {expires_at!r}")
    store.set_task_state(own, _state_key(state_key), value, expires_at=expiry, now=scope.now_fn())


def _granted_asset(store: Store, scope: TryScope, name: Any, *, write: bool) -> str:
    """``name`` when it is an inlet or outlet of the try's task (the assets Airflow gives it accessors for)."""
    # lazy: the task child imports only what its job runs (state stores pull the store models)
    from updraft.runtime.state_stores import granted_asset_names

    asset = _text(name, "an asset name")
    if write and not scope.writes:
        raise ScopeError(f"callbacks and triggers may not write asset state (asked for {asset!r})")
    if scope.state_assets is None:
        run = store.get_run(scope.key.dag_id, scope.key.run_id)
        dag = store.get_serialized_dag(run.dag_id, run.dag_hash) if run is not None else None
        task = dag.task_dict.get(scope.key.task_id) if dag is not None else None
        scope.state_assets = granted_asset_names(task, store)
    if asset not in scope.state_assets:
        raise ScopeError(f"task {scope.key.task_id!r} has no inlet or outlet asset {asset!r}: its state is not "
                         "reachable from this try")
    return asset


def _set_asset_state(store: Store, scope: TryScope, name: Any, state_key: Any, value: Any) -> None:
    asset = _granted_asset(store, scope, name, write=True)
    if value is None:
        raise ScopeError("Cannot set value as None")
    store.set_asset_state(asset, _state_key(state_key), value, now=scope.now_fn(), writer=scope.key)


# What a try may ask of ``CrossDag`` (the public methods operators and sensors call), and which of their keyword
# arguments are datetimes (one, or a list of them) that JSON carried as ISO strings.
CROSS_DAG_CALLS: Mapping[str, tuple[str, ...]] = {
    "is_paused": (), "dag_presence": (), "missing_tasks": (), "has_task_group": (), "run_state": (),
    "trigger": ("logical_date",), "count_runs": ("logical_dates",), "count_tis": ("logical_dates",),
    "task_group_states": ("logical_dates",), "count_matching": ("logical_dates",),
}

CROSS_DAG_WRITES = frozenset({"trigger"})


def _date(raw: Any) -> dt.datetime:
    return dt.datetime.fromisoformat(_text(raw, "a date"))


def _cross_dag(store: Store, scope: TryScope, method: Any, args: Any, kwargs: Any) -> Any:
    # lazy: the task child imports only what its job runs (cross-DAG calls on request)
    from updraft.runtime.cross_dag import CrossDag

    if not isinstance(method, str) or method not in CROSS_DAG_CALLS:
        raise ScopeError(f"the cross-DAG call {method!r} is not allowed from task code")
    if method in CROSS_DAG_WRITES and not scope.writes:
        raise ScopeError(f"callbacks and triggers may only read other DAGs' runs, not {method!r}")
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise ScopeError("malformed cross-DAG call")
    for name in CROSS_DAG_CALLS[method]:
        value = kwargs.get(name)
        if value is not None:
            kwargs[name] = [_date(v) for v in value] if isinstance(value, list) else _date(value)
    try:
        return getattr(CrossDag(store, now_fn=scope.now_fn, nudge=scope.nudge), method)(*args, **kwargs)
    except Exception as exc:  # the operator decides on its type (exists already, no such DAG, bad request)
        raise Relayed(exc) from exc


# The allow-list: method -> handler(store, scope, *json_args). Keep StoreProxy below in step with it.
ALLOWED: Mapping[str, Callable[..., Any]] = {
    "now": lambda store, scope: scope.now_fn(),
    "get_run": lambda store, scope, dag_id, run_id: store.get_run(_text(dag_id, "dag_id"), _text(run_id, "run_id")),
    "list_runs": lambda store, scope, dag_id, limit: store.list_runs(_text(dag_id, "dag_id"),
                                                                   limit=_optional_int(limit)),
    "get_serialized_dag": lambda store, scope, dag_id, dag_hash: store.get_serialized_dag(
        _text(dag_id, "dag_id"), _text(dag_hash, "dag_hash")),
    "try_dag": lambda store, scope, dag_id, dag_hash, task_id: try_dag(
        store, _text(dag_id, "dag_id"), _text(dag_hash, "dag_hash"), _text(task_id, "task_id")),
    "get_ti": lambda store, scope, key: store.get_ti(_ti_key(key)),
    "previous_successful_run": _previous_successful_run,
    "get_xcom": _get_xcom,
    "list_xcoms": lambda store, scope, dag_id, run_id, task_id, map_index: store.list_xcoms(
        _text(dag_id, "dag_id"), _text(run_id, "run_id"), _text(task_id, "task_id"), _optional_int(map_index)),
    "put_xcom": _put_xcom,
    "clear_xcoms": lambda store, scope, key: store.clear_xcoms(_own(scope, key)),
    "set_rendered_fields": _set_rendered_fields,
    "get_variable": lambda store, scope, name: store.get_variable(_text(name, "a variable key")),
    "set_variable": lambda store, scope, name, value, description: store.set_variable(
        _text(name, "a variable key"), _text(value, "a variable value"),
        None if description is None else _text(description, "a description")),
    "delete_variable": lambda store, scope, name: store.delete_variable(_text(name, "a variable key")),
    "get_connection": lambda store, scope, conn_id: store.get_connection(_text(conn_id, "a connection id")),
    "backend_variable": lambda store, scope, name: _backend_lookup(scope, "get_variable", name),
    "backend_connection": lambda store, scope, conn_id: _backend_lookup(scope, "get_conn_value", conn_id),
    "backend_config": lambda store, scope, key: _backend_lookup(scope, "get_config", key),
    "send_email": _send_email,
    "list_assets": lambda store, scope: store.list_assets(),
    "list_asset_events": lambda store, scope, asset_id, limit: store.list_asset_events(
        _asset_id(asset_id), limit=_optional_int(limit)),
    "get_triggering_events": lambda store, scope, dag_id, run_id: store.get_triggering_events(
        _text(dag_id, "dag_id"), _text(run_id, "run_id")),
    "put_outlet_events": _put_outlet_events,
    "cross_dag": _cross_dag,
    "get_task_state": _get_task_state,
    "set_task_state": _set_task_state,
    "delete_task_state": lambda store, scope, key, state_key: store.delete_task_state(
        _own_state(scope, key, write=True), _state_key(state_key)),
    "clear_task_state": lambda store, scope, key: store.clear_task_state(_own_state(scope, key, write=True)),
    "get_asset_state": lambda store, scope, name, state_key: store.get_asset_state(
        _granted_asset(store, scope, name, write=False), _state_key(state_key)),
    "set_asset_state": _set_asset_state,
    "delete_asset_state": lambda store, scope, name, state_key: store.delete_asset_state(
        _granted_asset(store, scope, name, write=True), _state_key(state_key)),
    "clear_asset_state": lambda store, scope, name: store.clear_asset_state(
        _granted_asset(store, scope, name, write=True)),
}


def serve_call(store: Store, scope: TryScope, message: Mapping[str, Any]) -> bytes:
    """The worker's answer to one decoded request ``{"call": method, "args": [...]}``: ``{"ok": value}`` or
    ``{"error": [type, message]}``, pickled."""
    try:
        method, args = message.get("call"), message.get("args")
        handler = ALLOWED.get(method) if isinstance(method, str) else None
        if handler is None or not isinstance(method, str) or not isinstance(args, list):
            raise ScopeError(f"the store call {method!r} is not allowed from task code")
        reply: dict[str, Any] = {"ok": handler(store, scope, *args)}
    except Relayed as relayed:
        reply = {"error": [type(relayed.exc).__name__, str(relayed.exc)], "raise": relayed.exc}
    except TypeError as exc:  # wrong number of arguments: a forged or malformed call
        reply = {"error": ["ScopeError", f"malformed store call: {exc}"]}
    except Exception as exc:
        reply = {"error": [type(exc).__name__, str(exc)]}
    try:
        return pickle.dumps(reply)
    except Exception:  # an exception that does not pickle: the child sees its type and message
        reply.pop("raise", None)
        return pickle.dumps(reply)


class ProxyError(RuntimeError):
    """A store call the worker failed (or refused: ``ScopeError``), raised in the child with the worker's message."""


class Channel:
    """The child's end of its socket to the worker: requests and one-way messages, one thread at a time."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.lock = threading.RLock()  # a log line written by a signal handler amid a call must not deadlock

    def send(self, message: Mapping[str, Any]) -> None:
        data = json.dumps(message, default=_json_default).encode()
        with self.lock:
            self.connection.send_bytes(data)

    def call(self, method: str, *args: Any) -> Any:
        data = json.dumps({"call": method, "args": list(args)}, default=_json_default).encode()
        with self.lock:
            self.connection.send_bytes(data)
            reply = pickle.loads(self.connection.recv_bytes())
        if isinstance(reply.get("raise"), Exception):
            raise reply["raise"]
        if "error" in reply:
            kind, message = reply["error"]
            if kind == "ScopeError":
                raise ScopeError(message)
            raise ProxyError(f"{kind}: {message}")
        return reply["ok"]


def _json_default(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} cannot be sent to the worker")


def _key(key: TIKey) -> list[Any]:
    return [key.dag_id, key.run_id, key.task_id, key.map_index]


class StoreProxy:
    """The part of ``Store`` a try's runtime uses, forwarded to the worker (see ``ALLOWED``)."""

    def __init__(self, channel: Channel, *, has_backend: bool = False, backend_error: str | None = None) -> None:
        self.channel = channel
        self._backend = ProxySecretsBackend(channel) if has_backend else None
        self._backend_error = backend_error

    @property
    def secrets_backend(self) -> ProxySecretsBackend | None:
        """The worker's secrets backend (``runtime.secrets.prepare_secrets`` takes it); a backend the worker could
        not build fails the try with the worker's message, as it would have in the worker."""
        if self._backend_error:
            raise ProxyError(self._backend_error)
        return self._backend

    def now(self) -> dt.datetime:
        value: dt.datetime = self.channel.call("now")
        return value

    def get_run(self, dag_id: str, run_id: str) -> Any:
        return self.channel.call("get_run", dag_id, run_id)

    def list_runs(self, dag_id: str, *, limit: int | None = None) -> Any:
        return self.channel.call("list_runs", dag_id, limit)

    def get_serialized_dag(self, dag_id: str, dag_hash: str) -> Any:
        return self.channel.call("get_serialized_dag", dag_id, dag_hash)

    def try_dag(self, dag_id: str, dag_hash: str, task_id: str) -> TryDag | None:
        found: TryDag | None = self.channel.call("try_dag", dag_id, dag_hash, task_id)
        return found

    def previous_successful_run(self, dag_id: str, logical_date: dt.datetime) -> Any:
        return self.channel.call("previous_successful_run", dag_id, logical_date)

    def get_ti(self, key: TIKey) -> Any:
        return self.channel.call("get_ti", _key(key))

    def get_xcom(self, key: TIKey, xcom_key: str, default: Any = None) -> Any:
        value = self.channel.call("get_xcom", _key(key), xcom_key)
        return default if value is _MISSING_REPLY else value

    def list_xcoms(self, dag_id: str, run_id: str, task_id: str, map_index: int | None = None) -> Any:
        return self.channel.call("list_xcoms", dag_id, run_id, task_id, map_index)

    def put_xcom(self, key: TIKey, xcom_key: str, value: Any, *, now: dt.datetime | None = None,
                 shown: Any = None) -> None:
        self.channel.call("put_xcom", _key(key), xcom_key, value, shown)  # the worker's clock stamps it

    def clear_xcoms(self, key: TIKey) -> int:
        count: int = self.channel.call("clear_xcoms", _key(key))
        return count

    def set_rendered_fields(self, key: TIKey, *, try_id: str, rendered_fields: Mapping[str, Any]) -> bool:
        return bool(self.channel.call("set_rendered_fields", _key(key), try_id, dict(rendered_fields)))

    def get_variable(self, key: str) -> Any:
        return self.channel.call("get_variable", key)

    def set_variable(self, key: str, value: str, description: str | None = None) -> Any:
        return self.channel.call("set_variable", key, value, description)

    def delete_variable(self, key: str) -> Any:
        return self.channel.call("delete_variable", key)

    def get_connection(self, conn_id: str) -> Any:
        return self.channel.call("get_connection", conn_id)

    def list_assets(self) -> Any:
        return self.channel.call("list_assets")

    def list_asset_events(self, asset_id: int, *, limit: int | None = None) -> Any:
        return self.channel.call("list_asset_events", asset_id, limit)

    def get_triggering_events(self, dag_id: str, run_id: str) -> Any:
        return self.channel.call("get_triggering_events", dag_id, run_id)

    def put_outlet_events(self, key: TIKey, try_number: int, events: list[dict[str, Any]],
                          now: dt.datetime | None = None) -> None:
        self.channel.call("put_outlet_events", _key(key), try_number, events)  # the worker's clock stamps them

    # -- the task and asset state stores (runtime.state_stores): the worker fences each call to the try ---------
    def get_task_state(self, key: TIKey, state_key: str, *, now: dt.datetime | None = None) -> Any:
        return self.channel.call("get_task_state", _key(key), state_key)  # expiry checked on the worker's clock

    def set_task_state(self, key: TIKey, state_key: str, value: Any, *, expires_at: dt.datetime | None,
                       now: dt.datetime | None = None) -> None:
        self.channel.call("set_task_state", _key(key), state_key, value, expires_at)  # the worker stamps it

    def delete_task_state(self, key: TIKey, state_key: str) -> None:
        self.channel.call("delete_task_state", _key(key), state_key)

    def clear_task_state(self, key: TIKey) -> int:
        count: int = self.channel.call("clear_task_state", _key(key))
        return count

    def get_asset_state(self, asset_name: str, state_key: str) -> Any:
        return self.channel.call("get_asset_state", asset_name, state_key)

    def set_asset_state(self, asset_name: str, state_key: str, value: Any, *, now: dt.datetime | None = None,
                        writer: TIKey | None = None) -> None:
        self.channel.call("set_asset_state", asset_name, state_key, value)  # the writer is the worker's try

    def delete_asset_state(self, asset_name: str, state_key: str) -> None:
        self.channel.call("delete_asset_state", asset_name, state_key)

    def clear_asset_state(self, asset_name: str) -> int:
        count: int = self.channel.call("clear_asset_state", asset_name)
        return count

    def cross_dag(self) -> CrossDagProxy:
        """The try's ``ti.cross_dag``: other DAGs' runs, read and triggered by the worker."""
        return CrossDagProxy(self.channel)


class CrossDagProxy:
    """``runtime.cross_dag.CrossDag`` as a try's child calls it: each method of ``CROSS_DAG_CALLS`` runs in the
    worker (``cross_dag``), which also nudges the scheduler for a run it triggered."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if method not in CROSS_DAG_CALLS:
            raise AttributeError(method)

        def call(*args: Any, **kwargs: Any) -> Any:
            kwargs = {name: list(value) if isinstance(value, (set, frozenset, tuple)) else value
                      for name, value in kwargs.items()}
            return self.channel.call("cross_dag", method, [list(a) if isinstance(a, (set, frozenset, tuple))
                                                            else a for a in args], kwargs)

        return call


class ProxySecretsBackend:
    """The environment's secrets backend, read by the worker (``backend_variable``/``backend_connection``)."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    def get_variable(self, key: str) -> str | None:
        value: str | None = self.channel.call("backend_variable", key)
        return value

    def get_conn_value(self, conn_id: str) -> str | None:
        value: str | None = self.channel.call("backend_connection", conn_id)
        return value

    def get_config(self, key: str) -> str | None:
        value: str | None = self.channel.call("backend_config", key)
        return value


class ProxyEmailSender:
    """The environment's email sender, used through the worker (``send_email``): the child holds no SES grant."""

    def send(self, *, to: Any, subject: str, html: str, cc: Any = (), bcc: Any = (), charset: str = "utf-8") -> str:
        message_id: str = self.channel.call("send_email", list(to), subject, html, list(cc), list(bcc), charset)
        return message_id

    def __init__(self, channel: Channel) -> None:
        self.channel = channel


class _Missing:
    """Pickles to the one instance the child compares against (``get_xcom``'s 'no such XCom')."""

    def __reduce__(self) -> str:
        return "_MISSING_REPLY"


_MISSING_REPLY = _Missing()
