"""Real runs with deferrals: the runtime harness (store on moto, DAG files, the real worker code) plus the
deferral state machine's own ASL on the local engine, on the test's clock, so an hour's wait is a clock advance."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from tests.functional.runtime.rt_harness import RuntimeEnv
from tests.functional.scheduling.harness import scheduler_for
from updraft.executors.step_functions import StepFunctionsWaits
from updraft.handler_events import worker_dispatch
from updraft.local.step_functions import LocalStepFunctions
from updraft.model.deferrals import SCHEDULE_RUN_EVENT, ResumeRequest, execution_name
from updraft.model.records import TaskInstance
from updraft.model.states import FINISHED_RUN_STATES
from updraft.runtime.trigger_check import check
from updraft.runtime.worker import handle_dispatch
from updraft.triggers.state_machine import definition

WORKER = "updraft-test-worker"
CHECK = "updraft-test-trigger-check"
STEP_SECONDS = 0.05  # one look at an async trigger: short, the tests' triggers answer at once or sleep


class DeferralEnv(RuntimeEnv):
    """``parallelism`` is the number of tries at once: 1 plays a single worker."""

    def __init__(self, root: Path, *, parallelism: int = 1) -> None:
        super().__init__(root)
        self.scheduler, self.executor = scheduler_for(self.store, self.clock, parallelism=parallelism)
        self.invokes: list[Any] = []  # the engine's resume invokes, played by drain like the executor's
        self.checks = 0  # the check function's looks at polling triggers
        self.engine = LocalStepFunctions(definition(WORKER, CHECK), invoke=self._invoke, clock=self.clock,
                                         call=self._check)
        self.waits = StepFunctionsWaits(self.engine, self.engine.state_machine_arn)
        self.scheduler.waits = self.waits  # a deferred try the scheduler ends (dagrun_timeout) has its wait stopped
        self.resumes = 0
        self.wakes = 0  # next-poke wakes of reschedule-mode sensors (played by drain as the worker does)
        self.dispatched = 0  # tries run by a worker (resumes not counted)
        self.credentials: Any = None  # the DAG-code role's, which the check looks at AWS with
        self.in_process = False  # tries run in the test's process (to see its moto), not in a child

    def _invoke(self, function: str, payload: Any) -> None:
        assert function == WORKER
        self.wakes += payload.get("kind") == SCHEDULE_RUN_EVENT
        self.invokes.append(payload)

    def _check(self, function: str, payload: Any) -> Any:
        assert function == CHECK
        self.checks += 1
        # In this process: the tests' FlagTrigger reads a flag the test sets in its own memory; AWS is looked at
        # with the DAG-code role's credentials alone, as in the check's child.
        credentials = self.credentials.environment() if self.credentials is not None else None
        return check(payload, store=self.store, now=self.clock(), step_seconds=STEP_SECONDS, in_process=True,
                     credentials=credentials)

    def drain(self) -> int:
        """Play every dispatch and every resume the wait engine sent, until none is left."""
        ran = 0
        while True:
            self.engine.run_due()
            items = [*self.executor.take(), *(worker_dispatch(p) for p in self.invokes)]
            self.invokes.clear()
            if not items:
                return ran
            for item in items:
                self.resumes += isinstance(item, ResumeRequest)
                self.dispatched += not isinstance(item, ResumeRequest)
                result = handle_dispatch(item, store=self.store, loader=self.loader, scheduler=self.scheduler,
                                         now_fn=self.clock, log_sink=self.logs, waits=self.waits,
                                         in_process=self.in_process)
                ran += result is not None

    def step(self) -> None:
        self.scheduler.run_pass()
        self.drain()

    def advance(self, **kwargs: float) -> None:
        self.clock.advance(**kwargs)
        self.step()

    def finished(self, dag_id: str, run_id: str) -> bool:
        run = self.store.get_run(dag_id, run_id)
        return run is not None and run.state in FINISHED_RUN_STATES

    def status_of(self, ti: TaskInstance) -> str | None:
        """The status of the execution ``ti``'s current deferral started (None: none)."""
        execution = self.engine.executions.get(execution_name(ti.key, ti.try_number, str(ti.try_id)))
        return execution.status if execution is not None else None


def at(clock_now: dt.datetime, **delta: float) -> dt.datetime:
    return clock_now + dt.timedelta(**delta)
