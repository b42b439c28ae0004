"""The limit-id grammar: every limit a try or a run can count against is one store item named here.

Built and parsed only in this module, so a limit id is never taken apart with string literals elsewhere. A limit
id is its kind, then ``:``-separated names, and is injective: a pool's name is the whole rest (any text); a dag_id
or task_id goes through ``_part`` (``:`` and ``%`` escaped: never needed for a valid one, whose ids stay as they
were); a run_id (which may contain ``:``) is only ever the one unescaped part between escaped ones. No limit id
starts with ``~`` (``store.keys.limit_pk`` names a long one by ``~`` and its digest).
"""

from __future__ import annotations

from updraft.model.key_parts import escaper

DEFAULT_POOL = "default_pool"
DEFAULT_POOL_SLOTS = 128
PARALLELISM_LIMIT = "parallelism"
_POOL_PREFIX = "pool:"
_part = escaper(":")


def pool_limit(pool: str) -> str:
    return f"{_POOL_PREFIX}{pool}"


def pool_of(limit_id: str) -> str | None:
    """The pool a limit id names, or None when it is another kind of limit."""
    return limit_id.removeprefix(_POOL_PREFIX) if limit_id.startswith(_POOL_PREFIX) else None


def run_tasks_limit(dag_id: str, run_id: str) -> str:
    """max_active_tasks: queued + running task instances of one DAG run (Airflow 3 counts it per run, not per DAG)."""
    return f"run_tasks:{_part(dag_id)}:{run_id}"


def dag_runs_limit(dag_id: str) -> str:
    """max_active_runs: running runs of one DAG."""
    return f"dag_runs:{_part(dag_id)}"


def task_limit(dag_id: str, task_id: str) -> str:
    """max_active_tis_per_dag: queued + running instances of one task across runs."""
    return f"task:{_part(dag_id)}:{_part(task_id)}"


def task_run_limit(dag_id: str, run_id: str, task_id: str) -> str:
    """max_active_tis_per_dagrun: queued + running instances of one (mapped) task within one run."""
    return f"task_run:{_part(dag_id)}:{run_id}:{_part(task_id)}"


def backfill_runs_limit(dag_id: str) -> str:
    """A backfill's max_active_runs: its queued and running runs, held from creation to the end of each run.

    Per DAG, since a DAG has at most one active backfill; as in Airflow, backfill runs do not count against
    the DAG's own max_active_runs (``dag_runs_limit``), which is for its scheduled and manual runs.
    """
    return f"backfill_runs:{_part(dag_id)}"
