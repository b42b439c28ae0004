"""``updraft local``: the whole system on one machine, event-driven as on AWS.

What runs where:

- the embedded AWS (``moto_server``) in a thread of this process, holding the resources the stack defines;
- the DAGs folder mirrored to the bucket (``dags_sync``); the bucket notifies a queue and this process hands each
  S3 event to the **parser handler**, as the S3 notification does on AWS;
- the **scheduler handler** on a tick, and on every asynchronous invoke (a triggered run's nudge);
- the **worker handler** in a pool of processes (the worker Lambda's concurrency); every task completion runs
  the mini scheduler in the worker, which invokes the next tries through the same local "Lambda";
- Fargate tasks as processes of their own, started by ECS RunTask calls (``workers.FargateRunner``).

Lambda invokes and RunTasks reach this process over a socket (``compute``/``compute_server``), so the
executors and handlers are the ones deployed, unchanged. On stop, tries that did not finish are released as
orphans (``inflight``, ``orphans``) for the scheduler to retry or fail as Airflow would, and ``--state-dir`` keeps
the table and the bucket for the next start (``snapshot``). The parser's and the workers' DAG mirrors live in a
working folder private to this start (``work_dir``), never at a path shared with other users or systems. The
parser, scheduler and API handlers are called in this process (``handlers``); the bucket's notifications reach the
parser through ``dag_events``; ``run_watch`` prints a line per run event. This module starts and stops the whole.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import datetime as dt
import json
import logging
import os
import shutil
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from updraft.executors.local_compute import ECS_RUN_TASK, LAMBDA_INVOKE, STATES_CALL
from updraft.handler_events import tick_event
from updraft.local.api_gateway import CognitoAuthorizer, LocalApiGateway
from updraft.local.compute_server import ComputeServer
from updraft.local.dag_events import DagEventPump
from updraft.local.dags_sync import DagsFolderSync
from updraft.local.endpoint import LocalEndpoint, updraft_home
from updraft.local.handlers import LocalHandlers
from updraft.local.inflight import InflightTries
from updraft.local.journal import MotoJournalTap
from updraft.local.moto_server import EmbeddedAwsServer
from updraft.local.provision import notify_dag_events, provision
from updraft.local.run_watch import RunWatcher
from updraft.local.snapshot import StateDir
from updraft.local.step_functions import LocalStepFunctions
from updraft.local.users import parse_users, passwords_for, provision_users
from updraft.local.work_dir import make_work_dir
from updraft.local.workers import COMPUTE_NICENESS, FargateRunner, WorkerPool, handlers_root
from updraft.resources import DAGS_PREFIX, LOCAL_CREDENTIALS, LOCAL_ENVIRONMENT, ResourceNames
from updraft.runtime.trigger_check import check
from updraft.services import reset_shared_services, shared_services
from updraft.triggers.state_machine import definition

log = logging.getLogger(__name__)
LOCAL_CHECK_FUNCTION = "updraft-local-trigger-check"  # the deferral loop's check, run in-process


@dataclass
class LocalOptions:
    dags_folder: str
    plugins_folder: str | None = None
    state_dir: str | None = None
    tick_seconds: float = 5.0
    workers: int = 4
    port: int = 0
    api_port: int = 0
    environment: str = LOCAL_ENVIRONMENT
    parallelism: int | None = None  # None: the worker count
    sync_seconds: float = 1.0
    snapshot_seconds: float = 15.0
    grace_seconds: float = 5.0
    verbose: bool = False
    write_endpoint: bool = True
    unpause_new_dags: bool = False  # Airflow's dags_are_paused_at_creation = False
    users: str | None = None  # Airflow's simple_auth_manager_users ("name:role,..."); None: every caller admin
    passwords_file: str | None = None  # their passwords (JSON); default $UPDRAFT_HOME/local_passwords.json
    concurrent_aws: bool = False  # the embedded DynamoDB serves different items at once (``moto_server``)
    compute_niceness: int = COMPUTE_NICENESS  # workers and Fargate tasks run this much below local mode's process

    @property
    def claim_parallelism(self) -> int:
        """Airflow's parallelism, capped to the worker count, as Airflow's LocalExecutor has exactly that many
        processes: a try claimed beyond the workers would wait in the pool's queue holding its slots, and a
        heavier try that becomes ready later would start after it. Fargate tasks count against it too."""
        return min(self.parallelism or self.workers, self.workers)


@dataclass
class StopReport:
    orphans: dict[str, str] = field(default_factory=dict)  # task label -> state it was released from
    snapshot: dict[str, int] | None = None


def next_pause(pause: float, every: float, idle_every: float | None, *, found: object, woken: bool) -> float:
    """A loop's next pause (``LocalSystem._loop``): doubled up to ``idle_every`` after a step that found nothing
    (returned False) and was not woken; ``every`` otherwise."""
    if idle_every is None or found is not False or woken:
        return every
    return min(idle_every, pause * 2)


class LocalSystem:
    def __init__(self, options: LocalOptions, say: Callable[[str], None] | None = None) -> None:
        self.options = options
        self._say = say or (lambda line: print(line, flush=True))
        self._stop = threading.Event()
        self._stopping = False
        self._threads: list[threading.Thread] = []
        self._wakes: list[threading.Event] = []
        self._pump_wake: threading.Event | None = None  # set when the folder sync sent the queue something
        self._snapshot_lock = threading.Lock()
        self._clients: dict[str, Any] = {}
        self._saved_env: dict[str, str] | None = None
        self.server: Any = None
        self.names = ResourceNames(options.environment)

    # == start ==================================================================================================
    def start(self) -> LocalSystem:
        opts = self.options
        if not Path(opts.dags_folder).is_dir():
            raise FileNotFoundError(f"DAGs folder {opts.dags_folder} does not exist")
        users = self._users()
        self._saved_env = dict(os.environ)
        os.environ.update(LOCAL_CREDENTIALS)
        self.server = EmbeddedAwsServer(port=opts.port, concurrent=opts.concurrent_aws).start()
        self.server.reset()  # moto's backends are process-wide: a second start in one process starts empty
        self.resources = provision(self.names, self.server.url, notify=False)
        self.state = StateDir(opts.state_dir) if opts.state_dir else None
        self.work_dir = make_work_dir(self.state.path if self.state else None, updraft_home())
        if self.state is not None and self.state.exists():
            restored = self.state.restore(self._client("dynamodb"), self._client("s3"), self.names.table,
                                          self.names.bucket)
            self.say(f"restored {restored['items']} items and {restored['objects']} objects from {self.state.path}"
                     f" (and {restored['journaled_items'] + restored['journaled_objects']} writes journaled since)")
        if self.state is not None:  # from now on every write is journaled before it is answered
            self.state.journal.rotate()
            self.server.guard.tap = MotoJournalTap(self.state.journal, self.names.table, self.names.bucket)
        notify_dag_events(self.resources)
        self.user_pool = self._provision_users(users) if users else None

        self.compute = ComputeServer({LAMBDA_INVOKE: self._on_invoke, ECS_RUN_TASK: self._on_run_task,
                                      STATES_CALL: self._on_states_call})
        self.deferrals = self._deferral_engine()
        self.config = self.resources.config(
            deferral_state_machine=self.deferrals.state_machine_arn,
            scheduler_function=self.names.scheduler_function, parser_function=self.names.parser_function,
            local_compute=self.compute.address,
            ecs_subnets=("subnet-local",), ecs_security_groups=("sg-local",),
            tick_seconds=max(1, round(opts.tick_seconds)), parallelism=opts.claim_parallelism,
            plugins_folder=str(Path(opts.plugins_folder).resolve()) if opts.plugins_folder else None,
            user_pool_client_id=self.user_pool.client_id if self.user_pool else None,
            user_pool_id=self.user_pool.pool_id if self.user_pool else None,
            user_pool_jwks_url=self.user_pool.jwks_url if self.user_pool else None, work_dir=str(self.work_dir),
            metrics_file=str(updraft_home() / "metrics" / f"{self.names.environment}.emf"),
            traces_file=str(updraft_home() / "traces" / f"{self.names.environment}.xray"))
        quiet = {} if opts.verbose else {"POWERTOOLS_LOG_LEVEL": "WARNING"}
        self.env = {**self.config.to_env(), **LOCAL_CREDENTIALS, "AWS_DEFAULT_REGION": self.names.region,
                    "POWERTOOLS_METRICS_DISABLED": "true", **quiet}
        os.environ.update(self.env)
        root = handlers_root()
        if root not in sys.path:
            sys.path.insert(0, root)

        reset_shared_services()
        self.services = shared_services()
        self.handlers = LocalHandlers(self.names)
        self.dag_events = DagEventPump(services=self.services, queue_url=self.resources.dag_events_queue_url,
                                       names=self.names, parse=self.handlers.parse, say=self.say, stop=self._stop,
                                       unpause_new_dags=opts.unpause_new_dags,
                                       asset_events=self.handlers.asset_events)
        if self.state is not None:  # the queue is not kept: what it held, and failed handlings, are found again
            pending = self.dag_events.catch_up(self.names.bucket, DAGS_PREFIX)
            if pending:
                self.say(f"parsing again {len(pending)} DAG file(s) the store had not caught up with")
        self.runs = RunWatcher(self.services.store, self.say)
        self.tries = InflightTries(store=self.services.store, say=self.say, runs=self.runs,
                                   stopping=lambda: self._stopping, nudge_run=self._call_scheduler_later)

        self.pool = WorkerPool(opts.workers, self.env, self.names.worker_function, niceness=opts.compute_niceness)
        self.pool.warm()
        self.fargate = FargateRunner(self.env, niceness=opts.compute_niceness)
        self._scheduler_calls = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="scheduler")

        self.sync = DagsFolderSync(self._client("s3"), self.names.bucket, DAGS_PREFIX, opts.dags_folder,
                                   on_removed=self.dag_events.notify_removed)
        self._pump_wake = self._loop("dag-events", 0.2, self.dag_events.pump, idle_every=1.0)
        self._sync_once()
        self._loop("dags-sync", opts.sync_seconds, self._sync_once)
        self._loop("tick", opts.tick_seconds, self._tick)
        self._loop("runs", 0.5, self.runs.poll, idle_every=2.0)
        self._loop("deferrals", 0.5, self.deferrals.run_due)
        if self.state is not None:
            self._loop("snapshot", opts.snapshot_seconds, self.snapshot)

        self.api = LocalApiGateway(self.handlers.api, port=opts.api_port,
                                   authorizer=CognitoAuthorizer(self.user_pool) if self.user_pool else None)
        self.endpoint_path = self._write_endpoint() if opts.write_endpoint else None
        self._banner()
        return self

    def _users(self) -> dict[str, Any]:
        """The users of ``--users`` with their passwords' file read (or written), before anything starts."""
        if not self.options.users:
            return {}

        users = parse_users(self.options.users)
        path = Path(self.options.passwords_file or updraft_home() / "local_passwords.json")
        self.passwords = passwords_for(users, path, self._say)
        return users

    def _provision_users(self, users: dict[str, Any]) -> Any:
        import boto3

        cognito = boto3.client("cognito-idp", region_name=self.names.region, endpoint_url=self.server.url)
        return provision_users(cognito, f"{self.names.prefix}-users", users, self.passwords,
                               endpoint_url=self.server.url, region=self.names.region)

    def _client(self, service: Literal["dynamodb", "s3"]) -> Any:
        """The embedded AWS's client for ``service``, made once (a client costs ~60 ms; snapshots come every
        few seconds). Needed before the handlers' ``Services`` exist, to restore the state."""
        if service not in self._clients:
            import boto3

            self._clients[service] = boto3.client(service, region_name=self.names.region,
                                                  endpoint_url=self.server.url)
        return self._clients[service]

    def _write_endpoint(self) -> Path:
        return LocalEndpoint(endpoint_url=self.server.url, env=self.config.to_env(), pid=os.getpid(),
                             dags_folder=str(Path(self.options.dags_folder).resolve()),
                             state_dir=str(self.state.path) if self.state else None, api_url=self.api.url).write()

    def _banner(self) -> None:
        opts = self.options
        lines = [
            f"Updraft local is running (environment '{self.names.environment}')",
            f"  REST API       {self.api.url}  (e.g. {self.api.url}/api/v2/monitor/health)",
            f"  embedded AWS   {self.server.url}  (table {self.names.table}, bucket {self.names.bucket})",
            f"  DAGs folder    {Path(opts.dags_folder).resolve()}  (synced every {opts.sync_seconds:g} s)",
            f"  plugins        {self.config.plugins_folder or '(none)'}",
            f"  state dir      {self.state.path if self.state else '(none: state is lost on stop; use --state-dir)'}",
            f"  workers        {opts.workers} worker processes; Fargate tasks run as processes; at most "
            f"{opts.claim_parallelism} tries at once (parallelism)",
            f"  scheduler      tick every {opts.tick_seconds:g} s, on every task completion, and when a run or a "
            "retry falls due",
            "  auth           " + (f"users {', '.join(self.passwords)} (POST /auth/token for a token)" if self.user_pool
                                  else "every caller is admin (updraft local --users 'name:ROLE,...' for users)"),
        ]
        if self.endpoint_path:
            lines.append(f"  CLI endpoint   {self.endpoint_path}  (updraft dags list, dags trigger ..., runs list ...)")
        lines.append("Press Ctrl-C to stop.")
        for line in lines:
            self._say(line)

    def say(self, line: str) -> None:
        self._say(f"{dt.datetime.now().strftime('%H:%M:%S')} {line}")

    def _loop(self, name: str, every: float, step: Callable[[], Any], *,
              idle_every: float | None = None) -> threading.Event:
        """Run ``step`` every ``every`` seconds until the system stops. With ``idle_every``, a step that returns
        False (it found nothing to do) doubles the pause, up to ``idle_every``: an idle local system polls its queue
        and its runs a few times a second less (each poll is a request to the embedded AWS, which a busy system's
        tries wait on). A step that found work, a failed one, or a set of the returned event (a caller that knows
        there is work) brings the pause back to ``every``."""
        wake = threading.Event()
        self._wakes.append(wake)

        def run() -> None:
            pause = every
            while True:
                woken = wake.wait(pause)
                if self._stop.is_set():
                    return
                wake.clear()
                try:
                    found = step()
                except Exception:
                    log.exception("local mode: %s failed; trying again in %g s", name, every)
                    found = None
                pause = next_pause(pause, every, idle_every, found=found, woken=woken)

        thread = threading.Thread(target=run, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)
        return wake

    # == the pieces AWS would run ================================================================================
    def _sync_once(self) -> None:
        report = self.sync.sync_once()
        if (report.uploaded or report.removed) and self._pump_wake is not None:
            self._pump_wake.set()  # their notifications are queued: the pump looks now, however idle it was
        for relative in report.uploaded:
            self.say(f"uploaded {DAGS_PREFIX}{relative}")
        for relative in report.removed:
            self.say(f"removed {DAGS_PREFIX}{relative}")

    def _tick(self) -> None:
        rule = f"arn:aws:events:{self.names.region}:{self.names.account}:rule/{self.names.tick_rule}"
        self.handlers.schedule(tick_event(rule))

    def _call_scheduler_later(self, event: dict[str, Any]) -> None:
        """An asynchronous scheduler invoke: on one of two threads, as Lambda would run it beside the caller."""
        self._scheduler_calls.submit(self._logged, self.handlers.schedule, event)

    def _on_invoke(self, message: dict[str, Any]) -> dict[str, Any]:
        function, payload = message.get("function"), message["payload"]  # the compute client always sends one
        if function == self.names.scheduler_function:
            if not self._stopping:
                self._call_scheduler_later(payload)
            return {"StatusCode": 202}
        if function == self.names.parser_function:  # the scheduler asks for a DAG file's timetables again
            if not self._stopping:
                self._scheduler_calls.submit(self._logged, self.handlers.parse, payload)
            return {"StatusCode": 202}
        if function != self.names.worker_function:
            return {"error": f"ResourceNotFoundException: Function not found: {function}"}
        if self._stopping:
            self.tries.release(payload)  # claimed while stopping: released now, not lost
            return {"error": "local mode is stopping"}
        self.tries.on_worker(payload, self.pool.submit(payload))
        return {"StatusCode": 202}

    def _deferral_engine(self) -> Any:
        """Step Functions as local mode plays it: the deferral state machine's own ASL on the local engine, its
        resume invokes (and sensors' next-poke wakes) going to the worker pool like any other invoke, its polling
        triggers' checks here (each look in a child, as the check Lambda takes it)."""
        def invoke(function: str, payload: Any) -> None:
            reply = self._on_invoke({"function": function, "payload": payload})
            if "error" in reply:
                raise RuntimeError(reply["error"])

        def call(function: str, payload: Any) -> Any:
            loader = self.services.loader  # the trigger's look runs in a child, with the user's folders importable
            role = self.services.dag_code_credentials  # and the DAG-code role's credentials, as the check Lambda
            return check(payload, store=self.services.store, now=dt.datetime.now(dt.UTC),
                         credentials=role.environment() if role is not None else None,
                         dags_folder=loader.dags_folder, plugins_folder=loader.plugins_folder)

        return LocalStepFunctions(definition(self.names.worker_function, LOCAL_CHECK_FUNCTION), invoke=invoke,
                                  clock=lambda: dt.datetime.now(dt.UTC), call=call)

    def _on_states_call(self, message: dict[str, Any]) -> dict[str, Any]:
        from botocore.exceptions import ClientError

        method = message.get("method")
        if method not in ("start_execution", "stop_execution", "list_executions", "describe_execution"):
            return {"error": f"local mode's Step Functions does not play {method!r}"}
        try:
            return dict(getattr(self.deferrals, method)(**message["request"]))
        except ClientError as exc:
            return {"client_error": exc.response["Error"]}

    def _on_run_task(self, message: dict[str, Any]) -> dict[str, Any]:
        if self._stopping:
            return {"tasks": [], "failures": [{"reason": "local mode is stopping"}]}
        response = self.fargate.run_task(message["request"], message.get("task_id", "task"), self.tries.fargate_done)
        task = self.fargate.running.get(response["tasks"][0]["taskArn"])
        if task is not None:
            self.tries.track(task.payload, task)
        return response

    @staticmethod
    def _logged(call: Callable[..., Any], *args: Any) -> None:
        try:
            call(*args)
        except Exception:
            log.exception("local mode: scheduler invoke failed")

    @property
    def orphans(self) -> dict[str, str]:
        """Task label -> the state its try was released from, for every try lost since the start."""
        return self.tries.orphans

    # == stop ===================================================================================================
    def snapshot(self) -> dict[str, int] | None:
        return None if self.state is None else self._save_state(self.state)

    def _save_state(self, state: StateDir) -> dict[str, int]:
        with self._snapshot_lock:
            return state.save(self._client("dynamodb"), self._client("s3"), self.names.table, self.names.bucket)

    def serve_forever(self) -> None:
        """Block until :meth:`stop` is called from another thread (the CLI catches Ctrl-C and calls it)."""
        while not self._stop.wait(0.5):
            pass

    def stop(self) -> StopReport:
        """Stop without losing anything: wait a little for running tries, release the rest, save the state."""
        self._stopping = True
        self._stop.set()
        for wake in self._wakes:
            wake.set()
        for thread in self._threads:
            thread.join(timeout=30)
        self.dag_events.close()
        futures = self.tries.running_futures()
        if futures or self.fargate.running:
            self.say(f"waiting up to {self.options.grace_seconds:g} s for "
                     f"{len(futures) + len(self.fargate.running)} running tries")
            concurrent.futures.wait(futures, timeout=self.options.grace_seconds)
        self.pool.stop()  # done callbacks release what did not finish
        for task in self.fargate.stop():
            task.process.wait()
        self._scheduler_calls.shutdown(wait=True, cancel_futures=True)
        self.tries.release_leftovers()
        self.compute.close()
        self.api.close()
        report = StopReport(orphans=dict(self.orphans))
        if self.state is not None:
            report.snapshot = saved = self._save_state(self.state)
            self.say(f"state saved to {self.state.path} ({saved['items']} items, {saved['objects']} objects)")
        self._remove_endpoint()
        self.server.guard.tap = None
        if self.state is not None:
            self.state.journal.close()
        self.server.stop()
        shutil.rmtree(self.work_dir, ignore_errors=True)
        self._restore_env()
        return report

    def _remove_endpoint(self) -> None:
        if self.endpoint_path is None:
            return
        with contextlib.suppress(FileNotFoundError, ValueError):
            if json.loads(self.endpoint_path.read_text()).get("pid") == os.getpid():
                self.endpoint_path.unlink()

    def _restore_env(self) -> None:
        if self._saved_env is not None:
            os.environ.clear()
            os.environ.update(self._saved_env)
        reset_shared_services()

