"""One check of a polled asset watcher: what the watcher's Step Functions execution (``model.asset_watches``) asks
the trigger-check function on each pass of its Task/Choice/Wait loop, instead of Airflow's always-on triggerer.

The execution's state is the input, the next state the answer: ``outcome`` (``fired``, ``waiting``, ``failed``: the
trigger raised, its ``error`` kept in the state and the trigger looked at again in ``DEFAULT_POLL_SECONDS``, or ``gone``
when no active, unpaused DAG is scheduled on the asset any more, its trigger changed, or the execution has checked
``RENEW_AFTER`` times: Step Functions keeps at most 25,000 history events per execution, so the watcher's sweep
starts the next generation), ``poll_seconds`` (the trigger's interval), ``seq`` (checks so far) and ``due_at``
(when the next check is due).

The look is the deferred tries' (``trigger_look.look``: ``poll_once``, or one step of the trigger's ``run()``), in a
child with the DAG-code role's credentials, reading the store as the listening DAG's tasks may. A fired event
becomes an asset event of the watcher's asset with Airflow's watcher extra (``{"from_trigger": True, "payload":
...}``), and the DAGs scheduled on it are queued; the loop then keeps watching. The event's id is keyed by the
execution and the check's ``seq``, with the check's due time as its time, so a check delivered twice records it
once (the asset event is a conditional write).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping
from typing import Any

from updraft.model.asset_watches import PolledWatch
from updraft.model.records import TIKey
from updraft.runtime.supervisor import TriggerLook, shared_supervisor
from updraft.runtime.trigger_look import DEFAULT_POLL_SECONDS, MIN_POLL_SECONDS, STEP_SECONDS, look
from updraft.scheduling import record_asset_event, still_wanted, watcher_extra
from updraft.store.api import Store

log = logging.getLogger(__name__)

RENEW_AFTER = 2000  # checks per execution: about 10 history events each, well inside Step Functions' 25,000


def event_source(execution: str, seq: int) -> str:
    """What keys the asset event of one check (its id is derived from it and the check's due time)."""
    return f"watch#{execution}#{seq}"


def check_watch(state: dict[str, Any], *, store: Store, now: dt.datetime, step_seconds: float = STEP_SECONDS,
                credentials: Mapping[str, str] | None = None, dags_folder: str | None = None,
                plugins_folder: str | None = None, in_process: bool = False) -> dict[str, Any]:
    """The execution's next state after one look at the watcher's trigger (``in_process``: look here, for tests
    whose trigger reads the test's memory)."""
    watch = PolledWatch.from_input(state)
    state = {k: v for k, v in state.items() if k != "error"}  # a failed look's error is the next state's only
    execution, seq = str(state["execution"]), int(state.get("seq", 0))
    listener = still_wanted(store, watch)  # type: ignore[arg-type]
    if listener is None or seq >= RENEW_AFTER:
        return {**state, "outcome": "gone"}
    try:
        found = _look(watch, listener, execution, store=store, now=now, step_seconds=step_seconds,
                      credentials=credentials, dags_folder=dags_folder, plugins_folder=plugins_folder,
                      in_process=in_process)
    except Exception as exc:  # a failing trigger is looked at again next interval, the error kept in the state
        log.warning("asset watcher %s of %s: its trigger failed: %s", watch.name, watch.asset_name, exc)
        wait = DEFAULT_POLL_SECONDS
        return {**state, "outcome": "failed", "error": f"{type(exc).__name__}: {exc}"[:1000], "seq": seq + 1,
                "poll_seconds": wait, "due_at": (now + dt.timedelta(seconds=wait)).isoformat()}
    due = dt.datetime.fromisoformat(str(state.get("due_at") or now.isoformat()))
    if found.fired:
        record_asset_event(store, name=watch.asset_name, uri=watch.uri, group=watch.group,  # type: ignore[arg-type]
                           source=event_source(execution, seq), timestamp=due, extra=watcher_extra(found.event))
    wait = max(MIN_POLL_SECONDS, round(found.poll_seconds))
    return {**state, "outcome": "fired" if found.fired else "waiting", "seq": seq + 1, "poll_seconds": wait,
            "due_at": (now + dt.timedelta(seconds=wait)).isoformat()}


def _look(watch: PolledWatch, listener: str, execution: str, *, store: Store, now: dt.datetime, step_seconds: float,
          credentials: Mapping[str, str] | None, dags_folder: str | None, plugins_folder: str | None,
          in_process: bool) -> TriggerLook:
    if in_process:
        return TriggerLook(**look(watch.classpath, watch.kwargs, store, step_seconds=step_seconds,
                                  credentials=credentials))
    # the trigger reads as a task of the listening DAG would, under the execution's name
    scope = TIKey(listener, f"asset-watch:{watch.asset_name}", watch.name)
    record = {"classpath": watch.classpath, "kwargs": watch.kwargs}
    return shared_supervisor().poll_trigger(scope, execution, record, store=store, now_fn=lambda: now,
                                            credentials=credentials, step_seconds=step_seconds,
                                            dags_folder=dags_folder, plugins_folder=plugins_folder)
