"""The task context: what Airflow passes to a running task, and ``get_current_context()`` to read it.

At parse time there is no context; asking for one is an error with Airflow's wording. The task runtime installs
one around each execution with ``set_current_context``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

KNOWN_CONTEXT_KEYS = frozenset({
    "conf", "conn", "dag", "dag_run", "data_interval_end", "data_interval_start", "ds", "ds_nodash",
    "exception", "expanded_ti_count", "inlet_events", "inlets", "logical_date", "macros", "map_index_template",
    "outlet_events", "outlets", "params", "partition_date", "partition_key", "prev_data_interval_end_success",
    "prev_data_interval_start_success", "prev_end_date_success", "prev_start_date_success", "reason", "run_id",
    "start_date", "task", "task_instance", "task_instance_key_str", "task_reschedule_count", "templates_dict",
    "test_mode", "ti", "asset_state_store", "task_state_store", "triggering_asset_events", "ts", "ts_nodash",
    "ts_nodash_with_tz", "try_number", "var",
})


class Context(dict):
    """The mapping a running task receives (Airflow's ``Context`` TypedDict, as a plain dict at run time)."""


# Per thread: local mode runs several tries at once in threads of one process, each with its own context.
_local = threading.local()


def _stack() -> list[Context]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def get_current_context() -> Context:
    stack = _stack()
    if not stack:
        raise RuntimeError("Current context was requested but no context was found! "
                           "Are you running within an Airflow task?")
    return stack[-1]


@contextlib.contextmanager
def set_current_context(context: Context) -> Iterator[Context]:
    stack = _stack()
    stack.append(context)
    try:
        yield context
    finally:
        stack.pop()


def context_merge(context: Context, *args: Any, **kwargs: Any) -> None:
    context.update(*args, **kwargs)
