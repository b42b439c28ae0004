"""The store's contract: every operation the scheduler, parser, workers and API perform on the metadata.

Each method is one named rule enforced by a conditional write (or a strongly consistent read), so its name says
what can and cannot happen. Methods that may lose a race return ``False`` instead of raising: losing is normal
when several schedulers run at once. ``updraft.store.dynamo.DynamoStore`` implements it on DynamoDB.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import DagRunState, TaskInstanceState


@dataclass
class LimitState:
    limit: int
    available: int
    holders: dict[str, int] = field(default_factory=dict)  # holder -> slots
    taken_at: dict[str, dt.datetime] = field(default_factory=dict)  # holder -> when it took them


@dataclass
class Pool:
    name: str
    slots: int
    description: str = ""
    occupied: int = 0


@dataclass
class DagMeta:
    """The per-DAG row: which file and version define it, pause state, and when its next run is due."""

    dag_id: str
    relative_fileloc: str
    dag_hash: str
    file_version: str | None = None
    is_paused: bool = True
    is_active: bool = True
    max_active_runs: int = 16
    max_active_tasks: int = 16
    timetable_summary: str | None = None
    tags: list[str] = field(default_factory=list)
    owners: str = "airflow"
    # Next scheduled run, as the timetable computed it; None when nothing more is due.
    next_dagrun_logical_date: dt.datetime | None = None
    next_dagrun_data_interval_start: dt.datetime | None = None
    next_dagrun_data_interval_end: dt.datetime | None = None
    next_dagrun_run_after: dt.datetime | None = None
    last_automated_data_interval_start: dt.datetime | None = None
    last_automated_data_interval_end: dt.datetime | None = None


@dataclass
class ParseOutcome:
    """What saving one parsed file did: DAGs stored (new version or unchanged), refused, deactivated."""

    stored: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    deactivated: list[str] = field(default_factory=list)
    import_errors: list[dict[str, Any]] = field(default_factory=list)


class Store(Protocol):
    # -- DAGs and files (parser, API) ------------------------------------------------------------------------
    def save_parsed_file(self, parsed: Any, *, now: dt.datetime) -> ParseOutcome:
        """Store a ParsedFile: each DAG's version (immutable, keyed by dag_hash), its meta row (owned by one
        file: a dag_id owned by another active file is refused and becomes an import error on this file),
        the file's import errors, and deactivate DAGs the file no longer defines. Idempotent."""

    def remove_dag_file(self, relative_path: str) -> list[str]:
        """The file was deleted: deactivate its DAGs, drop its import errors; returns the DAGs deactivated."""

    def get_dag_meta(self, dag_id: str) -> DagMeta | None: ...

    def list_dags(self, *, include_inactive: bool = False) -> list[DagMeta]:
        """Active DAGs by dag_id (Airflow's default listing); inactive ones too when asked."""

    def list_import_errors(self) -> list[dict[str, Any]]: ...

    def set_paused(self, dag_id: str, paused: bool, *, now: dt.datetime | None = None) -> bool:
        """False if the DAG does not exist. With ``now``, unpausing a catchup=False DAG moves its next run
        up to that clock (as Airflow's periodic re-parse keeps it current); without, the next run is kept."""

    def get_serialized_dag(self, dag_id: str, dag_hash: str) -> Any:
        """The SerializedDAG of that version (versions are immutable, so callers may cache)."""

    def due_dags(self, now: dt.datetime) -> list[DagMeta]:
        """Active, unpaused DAGs whose next run is due (run_after <= now): candidates, from an index."""

    def advance_next_dagrun(self, dag_id: str, *, expected_logical_date: dt.datetime | None,
                            next_info: Any, last_automated: Any) -> bool:
        """Move the DAG's next-run fields forward, only if no other scheduler already did."""

    # -- runs ------------------------------------------------------------------------------------------------
    def create_run(self, run: DagRun) -> bool:
        """Insert a run; False if (dag_id, run_id) exists (a scheduled run_id derives from its logical date)."""

    def get_run(self, dag_id: str, run_id: str) -> DagRun | None: ...

    def list_runs(self, dag_id: str, *, limit: int | None = None) -> list[DagRun]:
        """Newest logical date first."""

    def previous_run(self, dag_id: str, logical_date: dt.datetime, *, scheduled_only: bool = False) -> DagRun | None:
        """The run with the greatest logical date before ``logical_date`` (for depends_on_past); with
        ``scheduled_only``, manual runs are passed over (Airflow's ``get_previous_scheduled_dagrun``)."""

    def active_runs(self) -> list[DagRun]:
        """Queued and running runs, found through a sparse, sharded index: candidates to check."""

    def set_run_state(self, dag_id: str, run_id: str, *, expected: Iterable[DagRunState], state: DagRunState,
                      now: dt.datetime, note: str | None = None) -> bool:
        """Conditional run transition; a finished run leaves the active index."""

    # -- task instances --------------------------------------------------------------------------------------
    def get_run_tis(self, dag_id: str, run_id: str) -> list[TaskInstance]:
        """Every task instance item of the run, strongly consistent (absent = never touched)."""

    def get_ti(self, key: TIKey) -> TaskInstance | None: ...

    def transition_ti(self, key: TIKey, *, expected: Iterable[TaskInstanceState | None],
                      state: TaskInstanceState, expected_try_id: str | None = None,
                      fields: Mapping[str, Any] | None = None) -> bool:
        """Move a task instance to ``state`` only if it is in one of ``expected`` (None: the item does not
        exist yet, so this creates it) and, when given, its try_id matches (fencing a stale worker).
        ``fields`` are other TaskInstance attributes to set in the same write."""

    def start_ti(self, key: TIKey, *, try_id: str, fields: Mapping[str, Any]) -> TaskInstance | None:
        """``queued -> running`` for exactly this try, returning the instance as written (None: not this
        worker's to run): the worker keeps it, so recording the outcome needs no read."""

    def heartbeat(self, key: TIKey, *, try_id: str, lease_expires_at: dt.datetime) -> bool:
        """Extend a running try's lease; False if the try was ended by someone else (zombie fencing)."""

    def set_blocked_reason(self, key: TIKey, reason: str | None, *,
                           expected_state: TaskInstanceState = TaskInstanceState.SCHEDULED) -> bool:
        """Record why the instance was last not queued, only while it is in ``expected_state``."""

    # -- limits and pools ------------------------------------------------------------------------------------
    def take_slots(self, limit_id: str, holder: str, slots: int, *, limit: int, now: dt.datetime) -> bool:
        """Add ``holder`` with ``slots`` if that many are available (the limit item is created at ``limit``
        on first use). Idempotent: a holder already present is refused, never counted twice."""

    def release_slots(self, limit_id: str, holder: str) -> bool:
        """Remove ``holder`` and give its slots back; False if it held none."""

    def get_limit(self, limit_id: str) -> LimitState | None: ...

    def resize_limit(self, limit_id: str, limit: int) -> bool:
        """Change a limit's size (a DAG's max_active_tasks changed), keeping its holders."""

    def get_pool(self, name: str) -> Pool | None: ...

    def list_pools(self) -> list[Pool]: ...

    def set_pool(self, name: str, slots: int, description: str = "") -> Pool: ...

    def delete_pool(self, name: str) -> bool:
        """Delete a pool; default_pool cannot be deleted (raises)."""

    # -- XComs -----------------------------------------------------------------------------------------------
    def put_xcom(self, key: TIKey, xcom_key: str, value: Any, *, now: dt.datetime) -> None:
        """Set (overwrite) one XCom of a task instance; ``value`` must be JSON-able (large ones go to S3)."""

    def get_xcom(self, key: TIKey, xcom_key: str, default: Any = None) -> Any: ...

    def list_xcoms(self, dag_id: str, run_id: str, task_id: str,
                   map_index: int | None = None) -> dict[tuple[int, str], Any]:
        """(map_index, key) -> value for one task (all its map indexes unless one is given)."""

    def clear_xcoms(self, key: TIKey) -> int:
        """Delete a task instance's XComs before a new try runs, as Airflow does; returns how many."""
