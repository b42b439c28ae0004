"""``updraft dags test``: one DAG run to the end on the embedded AWS, through the real parser, scheduler and
task runtime, like ``airflow dags test``.

The DAG file is parsed in isolation exactly as the parser Lambda does it and stored; a manual run is triggered
and the scheduler drives it, dispatching tries to a thread pool that runs the same ``handle_dispatch`` the worker
Lambda runs (so tasks may run concurrently). DAG code (tasks, callbacks, trigger looks, in their children) reaches
the same embedded AWS, served to it over HTTP, with a DAG-code role's credentials as in local mode
(``dag_code_credentials``): a DAG's boto3 calls and the amazon provider's hooks work against the test's AWS, and
never reach a real one. Pools the DAG names that do not exist are created large enough, because, like Airflow's
``dags test``, a local test should not wait for a pool it cannot have.

Deferred tries wait on the deferral state machine's own ASL (``local.step_functions``). By default a test does not
sit through them: each wait ends at once and ``on_skip(label, span)`` is told how much time was skipped (the CLI
prints it); ``skip_waits=False`` waits in real time.

A Human-in-the-loop task waits as in Airflow's ``dags test``: for a response, which no one can send to the
embedded AWS, and not for its response timeout (Airflow's test loop applies none), so its timeout's wait is not
started (``HumanInputWaits``; only the scheduler's backstop for a lost wait resumes it, with its defaults, 5
minutes past that timeout); ``on_input_wait(task_ids)`` is told which tasks wait for input whenever that set
changes, and the test ends at its ``timeout_s`` as any test that cannot finish.

Unlike Airflow's, a test does not sit through a reschedule-mode sensor's waits: once nothing else can run and a
sensor waits for its next poke, the test's clock (the scheduler's, the workers' and the tasks' ``utcnow``) skips
to that poke, and says so (``on_sensor_skip``). The sensor's timeout and backoff see the time they would on AWS.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime as dt
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from updraft.executors.callback_requests import DagCallbackRequest
from updraft.executors.step_functions import StepFunctionsWaits
from updraft.handler_events import worker_dispatch
from updraft.local.embedded_aws import embedded_aws, served_over_http
from updraft.local.endpoint import updraft_home
from updraft.local.provision import dag_code_role
from updraft.local.step_functions import LocalStepFunctions
from updraft.metrics.airflow import AirflowMetrics
from updraft.metrics.emf import EmfWriter, FileLines
from updraft.model.hitl import is_hitl
from updraft.model.parse_results import ImportErrorRecord
from updraft.model.records import TaskInstance, TIKey
from updraft.model.states import FINISHED_RUN_STATES, WORKER_BOUND_STATES, TaskInstanceState
from updraft.parsing import ParseOptions, parse_dags_folder
from updraft.parsing.timetable_horizons import TimetableContext
from updraft.resources import METRICS_NAMESPACE, ResourceNames
from updraft.runtime.dag_code_credentials import DagCodeCredentials
from updraft.runtime.loader import LocalDagLoader
from updraft.runtime.logs import LocalLogSink
from updraft.runtime.trigger_check import check
from updraft.runtime.worker import handle_dispatch
from updraft.scheduling import Scheduler, SchedulerConfig, pinned_dag
from updraft.scheduling.commands import register_parsed_file, set_paused, trigger_dag
from updraft.store.config import StoreConfig
from updraft.store.dynamo import DynamoStore
from updraft.store.tables import create_table
from updraft.store.writes import TransactWrite
from updraft.triggers.state_machine import definition

TICK_S = 1.0
# The loop's passes come at most this often: a worker thread ending an item brings the next one forward (to notice
# the run's end at once), but a run of many short tries must not turn into a pass per try.
MIN_PASS_GAP_S = 0.2
DAGS_TEST_ENVIRONMENT = "dags-test"  # names the DAG-code role on a test's embedded AWS


class DagTestError(Exception):
    """A usage or import problem: the DAG cannot be tested (exit code 2)."""


@dataclass
class DagTestResult:
    dag_id: str
    run_id: str
    run_state: str
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    wall_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"dag_id": self.dag_id, "run_id": self.run_id, "run_state": self.run_state, "tasks": self.tasks}


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _import_error_text(errors: list[ImportErrorRecord]) -> str:
    return "\n".join(f"{e.filename}:{e.lineno or '?'}: {e.message}" for e in errors)


def run_dag_test(dag_id: str, *, dags_folder: str, parse_options: Any = None, logical_date: dt.datetime | None = None,
                 conf: dict[str, Any] | None = None, workers: int = 4, log_folder: str | None = None,
                 timeout_s: float = 3600.0, on_change: Callable[[str, str, int], None] | None = None,
                 skip_waits: bool = True, on_skip: Callable[[str, dt.timedelta], None] | None = None,
                 on_sensor_skip: Callable[[str], None] | None = None,
                 on_input_wait: Callable[[list[str]], None] | None = None,
                 metrics_file: str | None = None) -> DagTestResult:
    """Run one DAG run to its end; ``on_change(label, state, try_number)`` sees every task state change,
    ``on_sensor_skip(message)`` every skip of the clock to a sensor's next poke and ``on_input_wait(task_ids)``
    the Human-in-the-loop tasks waiting for a response. ``metrics_file``: where Airflow's metrics of the run are
    appended as the functions' EMF lines (``updraft.metrics``; the CLI's: ``metrics_file`` below)."""
    parse_options = parse_options or ParseOptions()
    if logical_date is not None:
        # A custom timetable is asked for the run's manual data interval at its date in the parser's child (this
        # process runs no timetable code); without a date, the spans evaluated around now answer.
        parse_options = dataclasses.replace(
            parse_options, timetable_context=TimetableContext(manual_at=(logical_date.isoformat(),)).to_json())
    plugins_folder = parse_options.plugins_folder
    parsed = parse_dags_folder(dags_folder, parse_options)
    owner = next((f for f in parsed.files if dag_id in f.dag_ids), None)
    if owner is None:
        errors = [e for f in parsed.files for e in f.import_errors]
        detail = f"\n{_import_error_text(errors)}" if errors else ""
        raise DagTestError(f"DAG '{dag_id}' not found in {dags_folder}{detail}")
    own_errors = [e for e in owner.import_errors if e.dag_id in (None, dag_id)]
    if own_errors:
        raise DagTestError(f"DAG '{dag_id}' failed to import:\n{_import_error_text(own_errors)}")
    with embedded_aws(), served_over_http() as endpoint_url:
        return _run(owner, dag_id, dags_folder=parsed.dags_folder, logical_date=logical_date, conf=conf,
                    plugins_folder=plugins_folder, workers=workers, log_folder=log_folder, timeout_s=timeout_s,
                    on_change=on_change, skip_waits=skip_waits, on_skip=on_skip, on_sensor_skip=on_sensor_skip,
                    on_input_wait=on_input_wait, credentials=dag_code_credentials(endpoint_url),
                    metrics_file=metrics_file)


def metrics_file() -> str:
    """Where ``updraft dags test`` appends its metrics: ``$UPDRAFT_HOME/metrics/dags-test.emf``."""
    return str(updraft_home() / "metrics" / f"{DAGS_TEST_ENVIRONMENT}.emf")


def dag_code_credentials(endpoint_url: str) -> DagCodeCredentials:
    """What DAG code holds in a test, as in local mode: the STS credentials of a DAG-code role created on the
    embedded AWS (no policies enforced there), and the address that AWS is served at (``endpoint_url``), so a
    task's boto3 calls, a provider's hooks with no connection (boto3's default chain) and a deferrable S3 wait's
    looks reach the test's AWS, never the real one."""
    import boto3

    names = ResourceNames(DAGS_TEST_ENVIRONMENT)
    role = dag_code_role(boto3.client("iam", region_name=names.region), names)
    return DagCodeCredentials(lambda: boto3.client("sts", region_name=names.region), role,
                              endpoint_url=endpoint_url)


def _run(owner: Any, dag_id: str, *, dags_folder: str, logical_date: dt.datetime | None, conf: dict | None,
         plugins_folder: str | None, workers: int, log_folder: str | None, timeout_s: float,
         on_change: Callable[[str, str, int], None] | None, skip_waits: bool = True,
         on_skip: Callable[[str, dt.timedelta], None] | None = None,
         on_sensor_skip: Callable[[str], None] | None = None,
         on_input_wait: Callable[[list[str]], None] | None = None,
         credentials: DagCodeCredentials | None = None, metrics_file: str | None = None) -> DagTestResult:
    config = StoreConfig(table_name="updraft-dags-test", region="us-east-1")
    create_table(config)
    store = DynamoStore(config) if on_change is None else _ObservedStore(config, on_change)
    utcnow = SkippingClock()
    now = utcnow()
    register_parsed_file(store, owner, now=now)
    set_paused(store, dag_id, False)  # like `airflow dags test`, a test runs a DAG whatever its pause state
    meta = store.get_dag_meta(dag_id)
    if meta is None:
        raise DagTestError(f"DAG '{dag_id}' was not stored")
    dag = pinned_dag(store, dag_id, meta.dag_hash)
    for pool_name in sorted({t.pool for t in dag.tasks} - {"default_pool"}):
        if store.get_pool(pool_name) is None:
            store.set_pool(pool_name, 128, "created by `updraft dags test`")
    loader = LocalDagLoader(dags_folder, plugins_folder)
    sink = LocalLogSink(log_folder or tempfile.mkdtemp(prefix="updraft-dags-test-logs-"))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="updraft-worker")
    errors: list[BaseException] = []
    closing = threading.Event()
    # Set when a worker thread ends an item: the loop's next pass comes then (MIN_PASS_GAP_S apart at the most), not
    # a whole tick later (a try's end schedules its successors itself, so the pass mostly finds that the run ended).
    worked = threading.Event()

    class ThreadExecutor:
        def dispatch(self, items: list[Any]) -> None:
            for item in items:
                if not isinstance(item, DagCallbackRequest):
                    if not closing.is_set():  # the run is over: no more tries are wanted
                        pool.submit(work, item)
                    continue
                # The run's end sends its DAG's callbacks, which Airflow's dags test runs too; the main loop may
                # already be closing the pool (it saw the end first), so then they run here, in this thread.
                try:
                    pool.submit(work, item)
                except RuntimeError:
                    work(item)

    # Like `airflow dags test`, only the one run: the scheduler creates no scheduled runs (a catchup DAG would
    # otherwise run its backlog beside the test, or wait behind it with max_active_runs). Parallelism is the worker
    # count, as Airflow's LocalExecutor has exactly that many processes: a try claimed beyond it would wait in the
    # thread pool's FIFO queue holding its slots, and a heavier try that becomes ready later would start after it.
    # No asset watcher runs either (Airflow's dags test starts no triggerer): a file watcher would delete its files.
    scheduler_config = SchedulerConfig(max_dagruns_to_create_per_loop=0, parallelism=workers,
                                       watcher_sweep_interval=None)
    metrics = AirflowMetrics(EmfWriter(METRICS_NAMESPACE, FileLines(metrics_file) if metrics_file else None))
    scheduler = Scheduler(store, ThreadExecutor(), scheduler_config, clock=utcnow, metrics=metrics)

    def work(item: Any) -> None:
        try:
            handle_dispatch(item, store=store, loader=loader, scheduler=scheduler, now_fn=utcnow, log_sink=sink,
                            waits=waits, credentials=credentials)
        except BaseException as exc:  # surfaced by the main loop: a worker bug must not hang the test
            errors.append(exc)
        finally:
            worked.set()

    engine, waits = _wait_engine(pool, work, store, clock=utcnow, skip_waits=skip_waits, on_skip=on_skip,
                                 loader=loader, credentials=credentials)
    waits = HumanInputWaits(waits, store)
    scheduler.waits = waits
    started = time.perf_counter()
    asking: list[str] = []
    run = trigger_dag(store, dag_id, now=utcnow(), conf=conf, logical_date=logical_date)
    try:
        while True:
            pass_started = time.perf_counter()
            engine.run_due()
            scheduler.run_pass()
            current = store.get_run(dag_id, run.run_id)
            if current is None:
                raise DagTestError(f"DAG run {run.run_id} disappeared")
            if current.state in FINISHED_RUN_STATES or errors:
                break
            if time.perf_counter() - started > timeout_s:
                raise DagTestError(f"DAG run did not finish within {timeout_s:.0f} s")
            tis = store.get_run_tis(dag_id, run.run_id)
            if (waiting := awaiting_input(tis)) != asking:
                asking = waiting
                if waiting and on_input_wait is not None:
                    on_input_wait(waiting)
            skipped = utcnow.skip_to_next_poke(tis) if skip_waits else None
            if skipped is not None:
                if on_sensor_skip is not None:
                    on_sensor_skip(skipped)
                continue  # the sensor is due now: the next pass claims it
            if worked.wait(TICK_S):
                worked.clear()
                time.sleep(max(0.0, MIN_PASS_GAP_S - (time.perf_counter() - pass_started)))
    finally:
        closing.set()
        pool.shutdown(wait=True)
    if errors:
        raise errors[0]
    return DagTestResult(dag_id, run.run_id, current.state.value, _task_table(store, dag, run),
                         wall_s=time.perf_counter() - started)


def _wait_engine(pool: concurrent.futures.ThreadPoolExecutor, work: Callable[[Any], None], store: Any, *,
                 clock: Callable[[], dt.datetime], skip_waits: bool,
                 on_skip: Callable[[str, dt.timedelta], None] | None, loader: Any,
                 credentials: DagCodeCredentials | None = None) -> tuple[Any, Any]:
    """The deferral state machine on the local engine, its resumes handed to the worker threads and its polling
    triggers' checks run here, each look in a child (the loader's folders importable there, with the DAG-code
    ``credentials``)."""
    def invoke(function: str, payload: Any) -> None:
        pool.submit(work, worker_dispatch(payload))

    def skipped(name: str, span: dt.timedelta) -> None:
        resume = engine.executions[name].input.get("resume")
        if on_skip is not None and resume:  # the next-poke wakes' skips are skip_to_next_poke's to tell
            on_skip(TIKey(resume.get("dag_id", ""), resume.get("run_id", ""), resume.get("task_id", "?"),
                          resume.get("map_index", -1)).label, span)

    def call(function: str, payload: Any) -> Any:
        return check(payload, store=store, now=clock(), dags_folder=loader.dags_folder,
                     plugins_folder=loader.plugins_folder,
                     credentials=credentials.environment() if credentials is not None else None)

    engine = LocalStepFunctions(definition("dags-test-worker", "dags-test-trigger-check"), invoke=invoke,
                                clock=clock, skip_waits=skip_waits, on_skip=skipped, call=call)
    return engine, StepFunctionsWaits(engine, engine.state_machine_arn)


def awaiting_input(tis: list[TaskInstance]) -> list[str]:
    """The tasks of a run deferred for a Human-in-the-loop response (Airflow's ``awaiting_input``)."""
    return sorted({ti.task_id for ti in tis if ti.state == TaskInstanceState.DEFERRED and is_hitl(ti.trigger)})


class HumanInputWaits:
    """The test's waits, but a Human-in-the-loop try's timeout is never waited for (Airflow's ``dags test`` applies
    no response timeout: the task waits for a response)."""

    def __init__(self, waits: Any, store: Any) -> None:
        self.waits = waits
        self.store = store

    def start(self, name: str, execution_input: dict[str, Any]) -> None:
        resume = execution_input.get("resume") or {}
        key = TIKey(resume.get("dag_id", ""), resume.get("run_id", ""), resume.get("task_id", ""),
                    resume.get("map_index", -1))
        ti = self.store.get_ti(key)
        if ti is not None and is_hitl(ti.trigger):
            return
        self.waits.start(name, execution_input)

    def __getattr__(self, name: str) -> Any:  # stop, and the deferral sweep's reads, as the wrapped waits
        return getattr(self.waits, name)


class SkippingClock:
    """The test's clock: the wall clock plus the waits skipped so far."""

    def __init__(self) -> None:
        self.skipped = dt.timedelta(0)
        self._lock = threading.Lock()

    def __call__(self) -> dt.datetime:
        with self._lock:
            return dt.datetime.now(dt.UTC) + self.skipped

    def skip_to_next_poke(self, tis: list[TaskInstance]) -> str | None:
        """When nothing runs or waits for a worker and a sensor waits for its next poke, move to that poke; the
        message says how far and for which sensor (None: nothing to skip)."""
        if any(ti.state in WORKER_BOUND_STATES for ti in tis):
            return None
        waiting = [(ti.next_retry_at, ti.key.label) for ti in tis
                   if ti.state == TaskInstanceState.UP_FOR_RESCHEDULE and ti.next_retry_at is not None]
        if not waiting:
            return None
        due, label = min(waiting)
        with self._lock:
            gap = due - (dt.datetime.now(dt.UTC) + self.skipped)
            if gap <= dt.timedelta(0):
                return None
            self.skipped += gap
        return (f"dags test: skipped {gap.total_seconds():g} s to {due.isoformat()}, the next poke of {label} "
                f"(mode='reschedule'); {self.skipped.total_seconds():g} s skipped in all")


class _ObservedStore(DynamoStore):
    """The store, telling ``on_change`` of every task state written, as it is written: a line per change,
    however quickly the next one follows (a poll would miss a retry's ``up_for_retry``). Every named transition
    (``create_ti``, ``queue_ti``, ``end_try``, ``apply_ti_change``) writes through ``transition_ti``, so it and
    ``start_ti`` see them all; a transition sent in a limits transaction (a claim, an end with its release) is
    built by ``transition_item`` and told once its transaction lands (``transaction_target``'s client).

    Changes are told in the order they were written: each write and its telling hold one lock, so a claim a
    scheduler makes in the slot an end just freed is never told before that end."""

    def __init__(self, config: StoreConfig, on_change: Callable[[str, str, int], None]) -> None:
        super().__init__(config)
        self._on_change = on_change
        self._changes_lock = threading.Lock()
        self._write_order = threading.RLock()  # held from a write's send until it is told (a write may nest another)
        # The transitions built, by id of their item (kept, so the id is not reused while it waits here): a
        # cancelled transaction's stay until its retry lands (or for good, a few, once its claim gave up).
        self._built: dict[int, tuple[object, TIKey, TaskInstanceState, int | None]] = {}

    def transition_item(self, key: TIKey, *, expected: Iterable[TaskInstanceState | None],
                        state: TaskInstanceState, ticket: str | None, held_ticket: str | None,
                        expected_try_id: str | None = None, fields: Mapping[str, Any] | None = None) -> TransactWrite:
        write = super().transition_item(key, expected=expected, state=state, ticket=ticket, held_ticket=held_ticket,
                                        expected_try_id=expected_try_id, fields=fields)
        with self._changes_lock:
            self._built[id(write.item)] = (write.item, key, state, (fields or {}).get("try_number"))
        return write

    def transaction_target(self) -> tuple[Any, str]:
        client, name = super().transaction_target()
        return _TellingClient(client, self._landed, self._write_order), name

    def _landed(self, items: Iterable[object]) -> None:
        with self._changes_lock:
            told = [self._built.pop(id(item))[1:] for item in items if id(item) in self._built]
        for key, state, claimed_try in told:
            written = self.get_ti(key) if claimed_try is None else None  # (only a claim sets the try number)
            self._tell(key.label, state.value,
                       claimed_try if claimed_try is not None else written.try_number if written is not None else 0)

    def transition_ti(self, key: TIKey, *, expected: Iterable[TaskInstanceState | None],
                      state: TaskInstanceState, expected_try_id: str | None = None,
                      fields: Mapping[str, Any] | None = None, waiting_index: bool = False) -> bool:
        with self._write_order:
            applied = super().transition_ti(key, expected=expected, state=state, expected_try_id=expected_try_id,
                                            fields=fields, waiting_index=waiting_index)
            if applied:
                try_number = (fields or {}).get("try_number")
                if try_number is None:  # unchanged by this write (only a claim sets it)
                    written = self.get_ti(key)
                    try_number = written.try_number if written is not None else 0
                self._tell(key.label, state.value, try_number)
        return applied

    def start_ti(self, key: TIKey, *, try_id: str, fields: Mapping[str, Any]) -> TaskInstance | None:
        with self._write_order:
            started = super().start_ti(key, try_id=try_id, fields=fields)
            if started is not None and started.state is not None:
                self._tell(key.label, started.state.value, started.try_number)
        return started

    def _tell(self, label: str, state: str, try_number: int) -> None:
        with self._changes_lock:  # whole lines, from the scheduler and every worker thread
            self._on_change(label, state, try_number)


class _TellingClient:
    """A DynamoDB client whose ``transact_write_items`` tells ``landed`` of the items of each transaction that
    landed, holding ``order`` from the send until told; every other call goes to ``client``."""

    def __init__(self, client: Any, landed: Callable[[Iterable[object]], None], order: threading.RLock) -> None:
        self._client = client
        self._landed = landed
        self._order = order

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def transact_write_items(self, **kwargs: Any) -> Any:
        with self._order:
            result = self._client.transact_write_items(**kwargs)
            self._landed(kwargs.get("TransactItems") or [])
        return result


def _task_table(store: Any, dag: Any, run: Any) -> dict[str, dict[str, Any]]:
    """Every task of the DAG, as Airflow lists them: never-touched tasks appear with state None and try 0."""
    tis = {ti.key.label: ti for ti in store.get_run_tis(run.dag_id, run.run_id)}
    table: dict[str, dict[str, Any]] = {}
    for task in sorted(dag.tasks, key=lambda t: t.task_id):
        labels = sorted((k for k, ti in tis.items() if ti.task_id == task.task_id), key=lambda k: tis[k].map_index)
        for label in labels or [task.task_id]:
            ti = tis.get(label)
            table[label] = {"state": ti.state.value if ti and ti.state else None,
                            "try_number": ti.try_number if ti else 0,
                            "start_date": _iso(ti.start_date if ti else None),
                            "end_date": _iso(ti.end_date if ti else None)}
    return table
