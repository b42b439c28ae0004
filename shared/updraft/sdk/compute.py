"""Where a task runs: Updraft's per-task choice between the worker Lambda and a Fargate task.

Authors choose with Airflow's own per-task ``executor=`` argument (``"lambda"`` or ``"fargate"``, or the AWS
provider's executor names) and size Fargate tasks with ``executor_config={"cpu": ..., "memory": ...}``. A task
that may run longer than Lambda allows goes to Fargate unless it was pinned to Lambda, which is an error at parse
time rather than a kill at minute 15.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

LAMBDA = "lambda"
FARGATE = "fargate"
LAMBDA_MAX_RUNTIME = timedelta(minutes=15)
# Leave the worker time to start, load the DAG and record the result inside Lambda's hard limit.
LAMBDA_TASK_BUDGET = timedelta(minutes=14)
DEFAULT_FARGATE_CPU = 512
DEFAULT_FARGATE_MEMORY = 1024

_ALIASES = {
    "lambda": LAMBDA,
    "awslambdaexecutor": LAMBDA,
    "localexecutor": LAMBDA,
    "sequentialexecutor": LAMBDA,
    "fargate": FARGATE,
    "ecs": FARGATE,
    "awsecsexecutor": FARGATE,
}

# Valid Fargate cpu -> (min memory, max memory, step) in MiB.
_FARGATE_SIZES = {
    256: (512, 2048, None),
    512: (1024, 4096, 1024),
    1024: (2048, 8192, 1024),
    2048: (4096, 16384, 1024),
    4096: (8192, 30720, 1024),
    8192: (16384, 61440, 4096),
    16384: (32768, 122880, 8192),
}


@dataclass(frozen=True)
class Compute:
    executor: str
    cpu: int | None = None
    memory: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"executor": self.executor, "cpu": self.cpu, "memory": self.memory}


def resolve_compute(executor: str | None, executor_config: dict | None, execution_timeout: timedelta | None,
                    *, task_id: str) -> Compute:
    """Validate the author's choice and fill in defaults; errors name the task and the fix."""
    config = dict(executor_config or {})
    if executor is None:
        long_running = execution_timeout is not None and execution_timeout > LAMBDA_TASK_BUDGET
        kind = FARGATE if long_running or "cpu" in config else LAMBDA
    else:
        key = str(executor).replace("_", "").replace("-", "").lower()
        if key.split(".")[-1] not in _ALIASES:
            raise ValueError(f"Task '{task_id}': executor '{executor}' is not available in Updraft; "
                             f"use executor='lambda' or executor='fargate'")
        kind = _ALIASES[key.split(".")[-1]]
        if kind == LAMBDA and execution_timeout is not None and execution_timeout > LAMBDA_TASK_BUDGET:
            raise ValueError(f"Task '{task_id}' is pinned to Lambda but its execution_timeout "
                             f"({execution_timeout}) exceeds what a Lambda invocation can run "
                             f"({LAMBDA_TASK_BUDGET}); use executor='fargate'")
    if kind == LAMBDA:
        return Compute(LAMBDA)
    cpu = _size(config.get("cpu", DEFAULT_FARGATE_CPU), "cpu", task_id)
    memory = _size(config.get("memory", max(DEFAULT_FARGATE_MEMORY, _FARGATE_SIZES.get(cpu, (0,))[0])), "memory",
                   task_id)
    if cpu not in _FARGATE_SIZES:
        raise ValueError(f"Task '{task_id}': Fargate cpu must be one of {sorted(_FARGATE_SIZES)}, got {cpu}")
    low, high, step = _FARGATE_SIZES[cpu]
    valid = low <= memory <= high and (memory in (512, 1024, 2048) if step is None else memory % step == 0)
    if not valid:
        raise ValueError(f"Task '{task_id}': Fargate memory {memory} MiB is not valid with cpu {cpu} "
                         f"(allowed: {low}-{high} MiB" + (f" in steps of {step})" if step else ")"))
    return Compute(FARGATE, cpu, memory)


def _size(value: Any, name: str, task_id: str) -> int:
    """Whole CPU units or MiB; ``"1024"`` is accepted, ``"1 vCPU"`` or ``True`` are not."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"Task '{task_id}': Fargate {name} must be a whole number, got {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"Task '{task_id}': Fargate {name} must be a whole number, got {value!r}") from None
    if not number.is_integer():
        raise ValueError(f"Task '{task_id}': Fargate {name} must be a whole number, got {value!r}")
    return int(number)


def fargate_size_for(memory: int) -> tuple[int, int]:
    """The smallest valid Fargate (cpu, memory) with at least ``memory`` MiB (the largest size beyond that): what a
    task that outgrew Lambda's memory is given on Fargate."""
    for cpu, (low, high, step) in sorted(_FARGATE_SIZES.items()):
        if memory <= high:
            if step is None:
                return cpu, next(m for m in (512, 1024, 2048) if m >= max(memory, low))
            return cpu, max(low, -(-memory // step) * step)
    cpu = max(_FARGATE_SIZES)
    return cpu, _FARGATE_SIZES[cpu][1]
