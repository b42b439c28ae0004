"""The worker's side of a try run in a child process: start it, serve its store calls, write its log, end it.

As Airflow 3's supervisor (``task_sdk/execution_time/supervisor.py``) runs the task runner in a child and answers
its requests, the worker keeps Updraft's credentials and clients to itself: the child (``task_process``) gets the
job, the DAG-code role's credentials (``dag_code_credentials``) and a socket. On that socket the worker answers the
allow-listed store calls (``store_proxy.ALLOWED``, fenced to the try), writes the log the child sends (masked
again here), and takes the child's ``TryResult``, which it checks before believing it.

The worker ends the child's process group (the child leads its own session) when the try's heartbeat is lost
(someone ended the try), when it runs past its ``execution_timeout`` plus a grace period (the child times itself
out first, with callbacks; this is the backstop for a child that ignores signals), or when the worker stops. A
child that ends without a result (killed, ``os._exit``, a crash of the interpreter) is a failed try saying so.

The same exchange runs the other user code a worker or the trigger check meets: a callback request's callbacks
(:meth:`TaskSupervisor.run_callbacks`) and one look at a polling trigger (:meth:`TaskSupervisor.poll_trigger`),
each in its own child with a read-only scope (``TryScope.writes``); the child's answer is checked the same way.

One task server per worker process (:func:`shared_supervisor`), started on first use and shared by the threads of
local mode (only the fork request is serialised). The worker process is made non-dumpable, so processes of the
same user (the children) cannot read its ``/proc/<pid>/environ`` or memory; a root child (a container running as
root) still could, which is why deployments run tasks as a non-root user (Lambda always does).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import logging
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import updraft
from updraft.executors.base import Dispatch
from updraft.executors.callback_requests import CallbackRequest
from updraft.model.deferrals import Deferral
from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import TASK_RESULT_STATES, TaskInstanceState
from updraft.notifications.ses import configured_sender
from updraft.parsing.scrub import scrubbed
from updraft.process_guard import make_undumpable
from updraft.requirements.dag_packages import pythonpath as dag_code_pythonpath
from updraft.runtime.log_limit import limit_in_force
from updraft.runtime.logs import LogSink, RelayedLog, relay
from updraft.runtime.rendered_fields import HeldFields
from updraft.runtime.secrets import BACKEND_KWARGS_VAR, BACKEND_VAR
from updraft.runtime.store_proxy import TryScope, serve_call
from updraft.runtime.task_process import GUARDED, PID
from updraft.scheduling import TryResult
from updraft.secrets.masker import redact_text
from updraft.store.api import Store

log = logging.getLogger(__name__)

# Past the task's own execution_timeout, how long the child gets to time itself out and run its callbacks.
TIMEOUT_GRACE = dt.timedelta(seconds=60)
# Past a trigger's step, how long its child gets to answer (a trigger blocking its event loop is killed then).
STEP_GRACE = dt.timedelta(seconds=5)
# How long a new task server has to become non-dumpable (an interpreter's start and its module's imports).
GUARD_TIMEOUT_S = 60.0


class ChildFailed(RuntimeError):
    """The child sent something that is not a result (the try fails with this message)."""


class ChildEnded(RuntimeError):
    """The child was ended (timeout, lost heartbeat) or died before its result; the message says which."""


class TriggerFailed(RuntimeError):
    """A trigger's look failed: the trigger raised, or its process was killed or died (the message says which)."""


@dataclasses.dataclass(frozen=True)
class TriggerLook:
    """What one look at a trigger found: its event's payload, encoded (``fired``), and the trigger's interval."""

    fired: bool
    event: Any
    poll_seconds: float


def _job(kind: str, *, dags_folder: str, plugins_folder: str | None, credentials: Mapping[str, str] | None,
         backend: Any, backend_error: str | None, **fields: Any) -> dict[str, Any]:
    """What a child gets to run one ``kind`` of job (``task_process.run_child``): the fields every kind needs, and
    the kind's own."""
    return {"kind": kind, "dags_folder": dags_folder, "plugins_folder": plugins_folder,
            "has_backend": backend is not None, "backend_error": backend_error,
            "has_sender": configured_sender() is not None, "env": child_environment(os.environ, credentials),
            "log_max_bytes": limit_in_force(), **fields}


def child_environment(env: Mapping[str, str], credentials: Mapping[str, str] | None) -> dict[str, str]:
    """The child's whole environment: the worker's as it is now, scrubbed (``AIRFLOW_VAR_*`` and the like stay),
    plus local mode's AWS endpoint, the environment's web address and the DAG-code role's credentials (without
    them, no AWS credentials at all). The secrets backend's settings are left out: the worker reads it."""
    out = {name: value for name, value in scrubbed(env).items() if name not in (BACKEND_VAR, BACKEND_KWARGS_VAR)}
    out.update({name: env[name] for name in ("AWS_ENDPOINT_URL", "UPDRAFT_BASE_URL") if env.get(name)})
    out.update(credentials or {})
    return out


class TaskSupervisor:
    """Runs tries in children of one task server (see the module notes)."""

    def __init__(self, *, timeout_grace: dt.timedelta = TIMEOUT_GRACE) -> None:
        self.timeout_grace = timeout_grace
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None

    def start(self) -> None:
        with self._lock:
            self._start()

    def _start(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        make_undumpable()
        ours, theirs = socket.socketpair()
        env = scrubbed(os.environ)
        root = str(Path(updraft.__file__).resolve().parents[1])
        env["PYTHONPATH"] = dag_code_pythonpath(root, os.environ)  # Updraft first, the DAG packages last
        proc = subprocess.Popen([sys.executable, "-m", "updraft.runtime.task_process", str(theirs.fileno())],
                                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=env)
        theirs.close()
        # Started, not yet safe: an exec leaves a process dumpable until it says otherwise. Waiting for its word
        # keeps that window out of reach of user code that runs after this returns (a worker's warm-up starts
        # the server before any try, and local mode parses nothing before its workers are warm).
        ours.settimeout(GUARD_TIMEOUT_S)
        try:
            guarded = ours.recv(len(GUARDED), socket.MSG_WAITALL)
        except OSError:
            guarded = b""
        if guarded != GUARDED:
            ours.close()
            proc.kill()
            proc.wait()
            raise OSError(f"the task server did not start (no word from it within {GUARD_TIMEOUT_S:.0f} s)")
        ours.settimeout(None)
        self._proc, self._control = proc, ours

    def close(self) -> None:
        with self._lock:
            proc, control, self._proc, self._control = self._proc, self._control, None, None
        if control is not None:
            control.close()  # the server's recv ends: it exits
        if proc is not None:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def _fork(self) -> tuple[Connection, int]:
        """A new child of the server and the worker's end of its socket."""
        ours, theirs = socket.socketpair()
        with self._lock:
            for attempt in (1, 2):  # a server that died (killed by a task) is started again once
                try:
                    self._start()
                    assert self._control is not None
                    socket.send_fds(self._control, [b"f"], [theirs.fileno()])
                    raw = self._control.recv(PID.size, socket.MSG_WAITALL)
                    if len(raw) == PID.size:
                        break
                except OSError:
                    pass
                if attempt == 2:
                    raise RuntimeError("the task server did not start a child process")
                self._proc, self._control = None, None
        theirs.close()
        (pid,) = PID.unpack(raw)
        return Connection(ours.detach()), pid

    def run(self, dispatch: Dispatch, *, store: Store, dags_folder: str, plugins_folder: str | None,
            now_fn: Callable[[], dt.datetime], log_sink: LogSink | None, hostname: str | None, run: DagRun | None,
            credentials: Mapping[str, str] | None, backend: Any = None, backend_error: str | None = None,
            execution_timeout: dt.timedelta | None = None, lost: threading.Event | None = None,
            nudge: Callable[[str, str], Any] | None = None, started: TaskInstance | None = None) -> TryResult:
        """Run the try in a child and return its result; never raises for anything the child does.

        ``started`` is the try as it started (a resumed try runs its ``next_method``, a sensor's next poke sees
        its reschedules); ``nudge`` is the worker's hand-off, called for a run the try triggered."""
        rendered = HeldFields(store, dispatch.key, dispatch.try_id)
        scope = TryScope(dispatch.key, dispatch.try_id, now_fn, backend, try_number=dispatch.try_number,
                         nudge=nudge, rendered=rendered)
        goes_on = started is not None and (started.next_method is not None or bool(started.reschedule_count))
        earlier_log = log_sink.read(dispatch.key, dispatch.try_number) if log_sink and goes_on else None
        job = _job("try", dags_folder=dags_folder, plugins_folder=plugins_folder, credentials=credentials,
                   backend=backend, backend_error=backend_error, dispatch=dispatch.to_payload(), run=run,
                   started=started, earlier_log=earlier_log, hostname=hostname)
        limit = execution_timeout + self.timeout_grace if execution_timeout else None
        try:
            try:
                result = _result(self._exchange(job, store, scope, log_sink, limit, lost))
            except ChildEnded as ended:
                result = TryResult(TaskInstanceState.FAILED, note=str(ended))
            except (ChildFailed, ValueError) as exc:
                result = TryResult(TaskInstanceState.FAILED,
                                   note=redact_text(f"the task's process misbehaved: {exc}"))
        except BaseException:  # the try ends another way (a stopped worker, a hand-off): its fields go now
            rendered.write()
            raise
        held = rendered.take()  # the end's write carries what was not written yet
        return dataclasses.replace(result, rendered_fields=held) if held is not None else result

    def run_callbacks(self, request: CallbackRequest, *, store: Store, dags_folder: str, plugins_folder: str | None,
                      now_fn: Callable[[], dt.datetime], log_sink: LogSink | None,
                      credentials: Mapping[str, str] | None, backend: Any = None,
                      backend_error: str | None = None) -> bool:
        """Run a callback request's callbacks (DAG or task) in a child, logged under the request's key; False when
        the child ended without finishing them (its log says why). The child may read as a try does and write
        Variables, but writes no task instance's data (Airflow's DAG processor, which runs these callbacks, has no
        XCom write either): its scope is read-only."""
        scope = TryScope(request.key, request.try_id, now_fn, backend, try_number=request.try_number, writes=False)
        job = _job("callbacks", dags_folder=dags_folder, plugins_folder=plugins_folder, credentials=credentials,
                   backend=backend, backend_error=backend_error, request=request)
        try:
            self._exchange(job, store, scope, log_sink, None, None)
        except (ChildEnded, ChildFailed, ValueError) as exc:
            log.warning("callbacks of %s did not finish: %s", request.key.label, exc)
            return False
        return True

    def poll_trigger(self, key: TIKey, try_id: str, record: Mapping[str, Any], *, store: Store,
                     now_fn: Callable[[], dt.datetime], credentials: Mapping[str, str] | None,
                     step_seconds: float, dags_folder: str | None = None,
                     plugins_folder: str | None = None) -> TriggerLook:
        """One look at the deferred try's trigger (its record's classpath and kwargs), in a child: the trigger's
        code gets the DAG-code role's credentials, reads the store as the try could, writes nothing. Raises
        ``TriggerFailed`` when the trigger raised, or its process had to be killed (``step_seconds`` plus
        ``STEP_GRACE`` passed) or ended without an answer."""
        scope = TryScope(key, try_id, now_fn, try_number=None, writes=False)
        job = _job("trigger", dags_folder=dags_folder or "", plugins_folder=plugins_folder, credentials=credentials,
                   backend=None, backend_error=None, classpath=record.get("classpath"),
                   kwargs=record.get("kwargs") or {}, step_seconds=step_seconds)
        limit = dt.timedelta(seconds=step_seconds) + STEP_GRACE
        try:
            return _trigger_look(self._exchange(job, store, scope, None, limit, None))
        except (ChildEnded, ChildFailed, ValueError) as exc:
            raise TriggerFailed(redact_text(f"the trigger's process failed: {exc}")) from None

    def _exchange(self, job: dict[str, Any], store: Store, scope: TryScope, log_sink: LogSink | None,
                  limit: dt.timedelta | None, lost: threading.Event | None) -> Any:
        """Send ``job`` to a new child, serve its calls and log, and return its (unchecked) result; the child is
        killed once it has run ``limit`` (from its fork: a task server's start does not count)."""
        connection, pid = self._fork()
        deadline = time.monotonic() + limit.total_seconds() if limit is not None else None
        with relay(log_sink, scope.key, scope.try_number or 1) as relayed:
            try:
                connection.send_bytes(pickle.dumps(job))
                return self._serve(connection, pid, store, scope, relayed, deadline, lost)
            finally:
                _kill(pid)  # the job is over: nothing it started may outlive it
                connection.close()

    def _serve(self, connection: Connection, pid: int, store: Store, scope: TryScope, relayed: RelayedLog,
               deadline: float | None, lost: threading.Event | None) -> Any:
        """Answer the child until it sends its result (or must be ended: then the log says why, ``ChildEnded``).

        While this waits for the child, a stop of the worker (``logs.write_open_logs``, in a signal handler that
        interrupted the wait) first takes the log pieces already on the socket (``_catch_up``)."""
        waiting = threading.Event()
        relayed.catch_up = lambda: _catch_up(connection, relayed) if waiting.is_set() else None
        while True:
            waiting.set()
            try:
                reason = self._wait(connection, deadline, lost)
            finally:
                waiting.clear()
            if reason is None:
                try:
                    message = connection.recv_bytes()
                except (EOFError, OSError):
                    reason = "the task's process ended without a result"
            if reason is not None:
                _kill(pid)
                stamp = dt.datetime.now(dt.UTC).isoformat()
                relayed.extend(f"[{stamp}] {reason}\n")
                raise ChildEnded(reason)
            decoded = json.loads(message)
            if not isinstance(decoded, dict):
                raise ChildFailed(f"not a message: {message[:200]!r}")
            if "call" in decoded:
                connection.send_bytes(serve_call(store, scope, decoded))
            elif not _take_log(decoded, relayed):
                return decoded.get("result")

    @staticmethod
    def _wait(connection: Connection, deadline: float | None, lost: threading.Event | None) -> str | None:
        """Wait for the child's next message; a reason to end it instead, if one comes first."""
        while True:
            if lost is not None and lost.is_set():
                return "the try was ended elsewhere (its heartbeat was refused); its process was killed"
            if deadline is not None and time.monotonic() > deadline:
                return "the task's process ran past its execution_timeout and was killed"
            ready, _, _ = select.select([connection.fileno()], [], [], 0.5)
            if ready:
                return None


def _take_log(message: dict[str, Any], relayed: RelayedLog) -> bool:
    """Add ``message`` to the log when it is a piece of it or the whole of it; False for any other message."""
    if "piece" in message:
        relayed.extend(str(message["piece"]))
    elif "log" in message:
        relayed.update(str(message["log"]))
    else:
        return False
    return True


def _catch_up(connection: Connection, relayed: RelayedLog) -> None:
    """Take the log messages the child had sent before the wait was interrupted, up to its first other message (a
    call or a result: nothing it prints after that one is sent before it is answered). Never blocks."""
    while connection.poll(0):
        message = json.loads(connection.recv_bytes())
        if not isinstance(message, dict) or not _take_log(message, relayed):
            return


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _result(raw: Any) -> TryResult:
    """The child's result, checked: the child runs user code, so its message is believed only in this shape."""
    if not isinstance(raw, dict) or raw.get("state") not in TASK_RESULT_STATES:
        raise ChildFailed(f"not a try result: {str(raw)[:200]!r}")
    skips, length, note = raw.get("skip_task_ids") or [], raw.get("xcom_length"), raw.get("note")
    if not (isinstance(skips, list) and all(isinstance(s, str) for s in skips)):
        raise ChildFailed("skip_task_ids is not a list of task ids")
    if length is not None and (not isinstance(length, int) or isinstance(length, bool)):
        raise ChildFailed("xcom_length is not an integer")
    if note is not None and not isinstance(note, str):
        raise ChildFailed("note is not text")
    delay, when = raw.get("retry_delay"), raw.get("reschedule_date")
    if delay is not None and (not isinstance(delay, (int, float)) or isinstance(delay, bool) or delay < 0):
        raise ChildFailed("retry_delay is not a number of seconds")
    state = TaskInstanceState(raw["state"])
    deferral = _deferral(raw.get("deferral")) if state == TaskInstanceState.DEFERRED else None
    if state == TaskInstanceState.UP_FOR_RESCHEDULE and not isinstance(when, str):
        raise ChildFailed("a rescheduled try has no reschedule_date")
    return TryResult(state, force_fail=bool(raw.get("force_fail")), xcom_length=length,
                     skip_task_ids=skips, note=None if note is None else redact_text(note)[:1000],
                     retry_delay=None if delay is None else dt.timedelta(seconds=delay), deferral=deferral,
                     reschedule_date=_when(when) if state == TaskInstanceState.UP_FOR_RESCHEDULE else None)


def _trigger_look(raw: Any) -> TriggerLook:
    """A trigger child's answer, checked (the trigger is user code): an error it raised, or one look's outcome."""
    if isinstance(raw, dict) and isinstance(raw.get("error"), str):
        raise TriggerFailed(redact_text(raw["error"])[:1000])
    if not isinstance(raw, dict) or not isinstance(raw.get("fired"), bool):
        raise ChildFailed(f"not a trigger look: {str(raw)[:200]!r}")
    interval = raw.get("poll_seconds")
    if not isinstance(interval, (int, float)) or isinstance(interval, bool) or interval <= 0:
        raise ChildFailed("poll_seconds is not a positive number")
    return TriggerLook(fired=raw["fired"], event=raw.get("event"), poll_seconds=float(interval))


def _when(raw: Any) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(raw)
    except (TypeError, ValueError) as exc:
        raise ChildFailed(f"not a date: {str(raw)[:50]!r}") from exc
    if value.tzinfo is None:
        raise ChildFailed(f"a date without a timezone: {raw!r}")
    return value


def _deferral(raw: Any) -> Deferral:
    """A deferred try's wait, checked field by field (``task_process.result_message`` sent it)."""
    if not isinstance(raw, dict):
        raise ChildFailed("a deferred try has no deferral")
    checks: dict[str, Any] = {"classpath": str, "kwargs": dict, "next_method": (str, type(None)),
                              "next_kwargs": (dict, type(None)), "times_out": bool, "end_from_trigger": bool,
                              "kind": str, "exponential_backoff": bool, "max_wait_s": (int, float, type(None))}
    if set(raw) - {*checks, "resume_at", "created_at", "timeout_at", "event"}:
        raise ChildFailed("a deferral with unknown fields")
    for name, kind in checks.items():
        if not isinstance(raw.get(name), kind):
            raise ChildFailed(f"the deferral's {name} is malformed")
    created, timeout = raw.get("created_at"), raw.get("timeout_at")
    return Deferral(classpath=raw["classpath"], kwargs=raw["kwargs"], next_method=raw["next_method"],
                    next_kwargs=raw["next_kwargs"], resume_at=_when(raw.get("resume_at")),
                    times_out=raw["times_out"], event=raw.get("event"), end_from_trigger=raw["end_from_trigger"],
                    kind=raw["kind"], created_at=None if created is None else _when(created),
                    timeout_at=None if timeout is None else _when(timeout),
                    exponential_backoff=raw["exponential_backoff"], max_wait_s=raw["max_wait_s"])


_shared: list[TaskSupervisor] = []
_shared_lock = threading.Lock()


def shared_supervisor() -> TaskSupervisor:
    """The process's supervisor (one task server per worker process, started on first use)."""
    with _shared_lock:
        if not _shared:
            _shared.append(TaskSupervisor())
        return _shared[0]
