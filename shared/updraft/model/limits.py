"""The limit-id grammar: every limit a try or a run can count against is one store item named here.

Built and parsed only in this module, so a limit id is never taken apart with string literals elsewhere.
"""

from __future__ import annotations

DEFAULT_POOL = "default_pool"
DEFAULT_POOL_SLOTS = 128
PARALLELISM_LIMIT = "parallelism"
_POOL_PREFIX = "pool:"


def pool_limit(pool: str) -> str:
    return f"{_POOL_PREFIX}{pool}"


def pool_of(limit_id: str) -> str | None:
    """The pool a limit id names, or None when it is another kind of limit."""
    return limit_id.removeprefix(_POOL_PREFIX) if limit_id.startswith(_POOL_PREFIX) else None


def run_tasks_limit(dag_id: str, run_id: str) -> str:
    """max_active_tasks: queued + running task instances of one DAG run (Airflow 3 counts it per run, not per DAG)."""
    return f"run_tasks:{dag_id}:{run_id}"


def dag_runs_limit(dag_id: str) -> str:
    """max_active_runs: running runs of one DAG."""
    return f"dag_runs:{dag_id}"


def task_limit(dag_id: str, task_id: str) -> str:
    """max_active_tis_per_dag: queued + running instances of one task across runs."""
    return f"task:{dag_id}:{task_id}"


def task_run_limit(dag_id: str, run_id: str, task_id: str) -> str:
    """max_active_tis_per_dagrun: queued + running instances of one (mapped) task within one run."""
    return f"task_run:{dag_id}:{run_id}:{task_id}"


def backfill_runs_limit(dag_id: str) -> str:
    """A backfill's max_active_runs: its queued and running runs, held from creation to the end of each run.

    Per DAG, since a DAG has at most one active backfill; as in Airflow, backfill runs do not count against
    the DAG's own max_active_runs (``dag_runs_limit``), which is for its scheduled and manual runs.
    """
    return f"backfill_runs:{dag_id}"
