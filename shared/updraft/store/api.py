"""The store's contract: every operation the scheduler, parser, workers and API perform on the metadata.

Each method is one named rule enforced by a conditional write (or a strongly consistent read), so its name says
what can and cannot happen. Methods that may lose a race return ``False`` instead of raising: losing is normal
when several schedulers run at once. ``updraft.store.dynamo.DynamoStore`` implements it on DynamoDB.

The contract is one protocol per aggregate (``Dags``, ``Runs``, ``TaskInstances``, ``Assets``, ``Pools``, ...),
each implemented by the store module of the same aggregate; ``Store`` is their composition. A function that needs
one aggregate takes its protocol, so a test double implements only that one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from updraft.model.backfills import Backfill
from updraft.model.parse_results import PluginsReport
from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.serialization.model import SerializedDAG
from updraft.store.writes import TransactWrite
from updraft.timetables.base import DagRunInfo, DataInterval

if TYPE_CHECKING:  # the aggregates' records, defined beside their storage (pynamodb); annotations only here
    from updraft.store.asset_partitions import PartitionLog, PendingPartition
    from updraft.store.assets import AliasRecord, AssetEvent, AssetRecord, QueuedTarget, TriggerCursor
    from updraft.store.connections import ConnectionRecord
    from updraft.store.event_logs import EventLog
    from updraft.store.state_stores import StateEntry
    from updraft.store.variables import VariableRecord


@dataclass(frozen=True)
class RunEnds:
    """A run's bookkeeping for its mini scheduler's incremental step (``scheduling.downstream``): ended upstream
    instances counted per wide fan-in task (None: ended leaves) and ended instances per counted mapped task, how
    many instances each counted mapped task expanded into, and the token of the last pass that left scheduled
    instances of the run unclaimed (None: none is known to wait)."""

    counts: dict[str | None, int] = field(default_factory=dict)
    waiting: str | None = None
    expanded: dict[str, int] = field(default_factory=dict)


@dataclass
class RunRead:
    """What the mini scheduler reads of a run in one request (``Runs.read_run``): the run (None: no such run), its
    DAG's row, the task instances named that have an item, the run's ``RunEnds`` and the limits' counter items
    named (by limit id and shard, as stored: ``updraft.limits`` reads them)."""

    run: DagRun | None = None
    meta: DagMeta | None = None
    tis: dict[TIKey, TaskInstance] = field(default_factory=dict)
    ends: RunEnds = field(default_factory=RunEnds)
    counters: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)


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
    # What registration reads to decide: the hash of what the first next run depends on (None: the DAG could
    # not be loaded to compute one), catchup, and when the row was last written (a stale owner's is old).
    schedule_key: str | None = None
    catchup: bool = False
    updated_at: dt.datetime | None = None
    # A custom timetable's runs ahead, as the parser evaluated them (``Horizon.to_dict()``); None otherwise.
    timetable_horizon: dict[str, Any] | None = None


@dataclass
class FileRecord:
    """What the store remembers of one DAG file: the DAGs it owns and its import errors (as stored).

    ``parse_failures`` counts the handlings of the file's object ``failed_version`` that failed in Updraft's own
    code (``dag_registration.record_parse_failure``); a successful parse writes the record with none."""

    relative_path: str
    file_hash: str | None = None
    file_version: str | None = None
    dag_ids: list[str] = field(default_factory=list)
    import_errors: list[dict[str, Any]] = field(default_factory=list)
    parsed_at: dt.datetime | None = None
    parse_failures: int = 0
    failed_version: str | None = None


@dataclass
class Pool:
    """A pool Airflow users see: its size and settings. What holds its slots is its limit's counters and the
    holders' tickets (``updraft.limits``)."""

    name: str
    slots: int  # -1: unlimited
    description: str = ""
    # Airflow's include_deferred: a deferred task keeps its slot of this pool while it waits.
    include_deferred: bool = False


class Dags(Protocol):
    """The DAGs' rows and their immutable serialized versions (``store.dags``): registration, the scheduler, the
    API."""

    def get_dag_meta(self, dag_id: str) -> DagMeta | None: ...

    def get_dag_metas(self, dag_ids: Iterable[str]) -> dict[str, DagMeta]:
        """The rows of the DAGs that exist among ``dag_ids``, by dag_id, strongly read in batches of 100."""

    def list_dags(self, *, include_inactive: bool = False) -> list[DagMeta]:
        """Active DAGs by dag_id (Airflow's default listing); inactive ones too when asked."""

    def put_new_dag(self, dag_id: str, values: Mapping[str, Any]) -> bool:
        """Create the DAG's row from DagMeta ``values``; False if it exists (another creator won)."""

    def update_dag_meta(self, dag_id: str, values: Mapping[str, Any], *, expected: DagMeta) -> bool:
        """Set DagMeta ``values`` (None removes one), only if the fields a decision read are still as in
        ``expected`` (owner file, hash, active, paused, next run); the due index follows the result."""

    def deactivate_dag(self, dag_id: str, *, expected_owner: str) -> bool:
        """Mark the DAG inactive, only while ``expected_owner`` still owns it and it is active."""

    def put_version(self, dag_id: str, digest: str, document: dict[str, Any], now: dt.datetime) -> None:
        """Store an immutable serialized version (no-op when it exists)."""

    def get_serialized_dag(self, dag_id: str, dag_hash: str) -> SerializedDAG | None:
        """The SerializedDAG of that version (None: no such version), from the process's one cache of versions.
        Shared by every caller in the process: read-only."""

    def due_dags(self, now: dt.datetime) -> list[DagMeta]:
        """Active, unpaused DAGs whose next run is due (run_after <= now): candidates, from an index."""

    def advance_next_dagrun(self, dag_id: str, *, expected_logical_date: dt.datetime | None,
                            next_info: DagRunInfo | None, last_automated: DataInterval | None) -> bool:
        """Move the DAG's next-run fields forward, only if no other scheduler already did."""


class Files(Protocol):
    """What the store remembers of each DAG file (``store.files``): registration, the API's import errors."""

    def get_file_record(self, relative_path: str) -> FileRecord | None: ...

    def put_file_record(self, record: FileRecord, *, previous: FileRecord | None) -> bool:
        """Write the file's record (import errors trimmed to fit); False when it equals ``previous`` as
        stored, so a redelivered event writes nothing."""

    def delete_file_record(self, relative_path: str) -> None: ...

    def list_import_errors(self) -> list[dict[str, Any]]: ...


class Runs(Protocol):
    """DAG runs (``store.runs``): creation, named transitions, the active-run index, the callback fence."""

    def remember_run_shards(self, dag_id: str, run_id: str, shards: int) -> None:
        """Keep a run's shard count (``store.run_shards``) as a read of the run said, so its instances are found
        without reading the run again (every read of a run keeps it too)."""

    def create_run(self, run: DagRun) -> bool:
        """Insert a run; False if (dag_id, run_id) exists (a scheduled run_id derives from its logical date). The
        store chooses the run's shard count (``store.run_shards``) and sets ``run.ti_shards``."""

    def get_run(self, dag_id: str, run_id: str) -> DagRun | None: ...

    def get_run_and_dag_meta(self, dag_id: str, run_id: str) -> tuple[DagRun | None, DagMeta | None]:
        """The run and its DAG's row, both strongly read, in one request (they share the DAG's partition)."""

    def list_runs(self, dag_id: str, *, limit: int | None = None) -> list[DagRun]:
        """Newest logical date first."""

    def previous_run(self, dag_id: str, logical_date: dt.datetime, *, scheduled_only: bool = False) -> DagRun | None:
        """The run with the greatest logical date before ``logical_date`` (for depends_on_past); with
        ``scheduled_only``, manual runs are passed over (Airflow's ``get_previous_scheduled_dagrun``)."""

    def active_runs(self) -> list[DagRun]:
        """Queued and running runs, found through a sparse, sharded index: candidates to check."""

    def set_run_state(self, dag_id: str, run_id: str, *, expected: Iterable[DagRunState], state: DagRunState,
                      now: dt.datetime) -> bool:
        """Conditional run transition; a finished run leaves the active index."""

    def create_run_item(self, run: DagRun, *, ticket: str) -> TransactWrite:
        """``create_run``'s write (built, not sent) for an ``updraft.limits`` claim, the run carrying ``ticket``."""

    def run_state_item(self, dag_id: str, run_id: str, *, expected: Iterable[DagRunState], state: DagRunState,
                       now: dt.datetime, ticket: str | None, held_ticket: str | None) -> TransactWrite:
        """``set_run_state``'s write (built, not sent) for an ``updraft.limits`` transaction, carrying the run's
        ``ticket`` and conditional on the one it carries (``held_ticket``) as well as on its state."""

    def delete_run_item(self, dag_id: str, run_id: str, *, expected: Iterable[DagRunState],
                        held_ticket: str) -> TransactWrite:
        """``delete_run``'s write (built, not sent) for an ``updraft.limits`` release, conditional on the run
        carrying ``held_ticket``."""

    def set_run_note(self, dag_id: str, run_id: str, note: str | None) -> bool:
        """Set (None: remove) a run's note; False if the run does not exist."""

    def delete_run(self, dag_id: str, run_id: str, *, expected: Iterable[DagRunState]) -> bool:
        """Delete the run's item while it is in one of ``expected``; False otherwise (or already gone)."""

    def claim_callback(self, dag_id: str, run_id: str, request_id: str) -> bool:
        """The run's callback fence: True for the first claim of ``request_id``, False for any later one."""

    def delete_run_partition(self, dag_id: str, run_id: str) -> int:
        """Delete the run's task instances, recorded tries and XComs; returns how many items went."""

    def get_run_meta_and_tis(self, dag_id: str, run_id: str, ti_keys: Iterable[TIKey], *, ends: bool = True
                             ) -> tuple[DagRun | None, DagMeta | None, dict[TIKey, TaskInstance], RunEnds]:
        """The run, its DAG's row, those of ``ti_keys`` that have an item and (``ends``) the run's ``RunEnds``,
        strongly read, in one request."""

    def read_run(self, dag_id: str, run_id: str, ti_keys: Iterable[TIKey], *, ends: bool = True,
                 counters: Iterable[tuple[str, int]] = ()) -> RunRead:
        """``get_run_meta_and_tis``'s read, with the counter items of ``counters`` (limit id, shard) that exist."""


class TaskInstances(Protocol):
    """Task instances and their recorded tries (``store.task_instances``; the waiting index: ``store.waiting``):
    claims, a worker's try, users' marks and clears."""

    def get_run_tis(self, dag_id: str, run_id: str) -> list[TaskInstance]:
        """Every task instance item of the run, strongly consistent (absent = never touched)."""

    def get_ti(self, key: TIKey) -> TaskInstance | None: ...

    def count_ends(self, dag_id: str, run_id: str, task_ids: Iterable[str | None]) -> RunEnds:
        """One more ended upstream instance of each fan-in of ``task_ids`` (None: one more ended leaf; a counted
        mapped task: one more of its ended instances), in one write: the item after it (counts, expansions and
        the waiting mark)."""

    def record_expansions(self, dag_id: str, run_id: str, expanded: Mapping[str, int]) -> None:
        """Record how many instances each counted mapped task of ``expanded`` expanded into (a SET of the same
        number again is harmless; a re-expansion writes its own), before those instances are created."""

    def mark_waiting(self, dag_id: str, run_id: str) -> bool:
        """Note that scheduled instances of the run were left unclaimed: True when this call set the mark where
        there was none (so it is the one to look at the run again: ``Scheduler._mark_waiting``)."""

    def clear_waiting(self, dag_id: str, run_id: str, token: str) -> bool:
        """Remove the waiting mark if it is still ``token`` (no pass left instances waiting since it was read)."""

    def create_ti(self, key: TIKey, *, state: TaskInstanceState, fields: Mapping[str, Any] | None = None,
                  waiting_index: bool = False) -> bool:
        """Create a never-touched instance in ``state``; False if it exists (``waiting_index``: created scheduled
        with a blocked reason, it enters its run's ``waiting_tis``)."""

    def queue_ti(self, key: TIKey, *, expected: TaskInstanceState | None, fields: Mapping[str, Any]) -> bool:
        """The claim: ``expected`` (scheduled, or None: create it) -> queued, clearing its blocked reason."""

    def transition_item(self, key: TIKey, *, expected: Iterable[TaskInstanceState | None],
                        state: TaskInstanceState, ticket: str | None, held_ticket: str | None,
                        expected_try_id: str | None = None, fields: Mapping[str, Any] | None = None) -> TransactWrite:
        """A transition's write (built, not sent) for an ``updraft.limits`` transaction, carrying the holder's
        ``ticket`` and conditional on the one it carries (``held_ticket``) as well as on its state."""

    def ticket_item(self, key: TIKey, *, ticket: str | None, held_ticket: str) -> TransactWrite:
        """The instance's ticket alone changed (built, not sent), conditional on it carrying ``held_ticket``."""

    def transaction_target(self) -> tuple[Any, str]:
        """The low-level DynamoDB client the store writes with and its table's name (the limits' transactions
        go through them)."""

    def end_try(self, key: TIKey, *, try_id: str, state: TaskInstanceState, fields: Mapping[str, Any]) -> bool:
        """running -> ``state`` for exactly this try (a stale worker's outcome is refused)."""

    def apply_ti_change(self, key: TIKey, *, expected: TaskInstanceState | None, state: TaskInstanceState,
                        expected_try_id: str | None = None, fields: Mapping[str, Any] | None = None) -> bool:
        """One change an evaluation decided: ``expected`` (None: no state, so the item does not exist yet and this
        creates it, or a clear reset it and this updates it, keeping its try number) -> ``state``, and when given
        only while the try is ``expected_try_id`` (fencing a stale worker). ``fields`` are other TaskInstance
        attributes set in the same write."""

    def mark_ti(self, key: TIKey, *, expected: TaskInstanceState | None, state: TaskInstanceState,
                expected_try_id: str | None = None, fields: Mapping[str, Any] | None = None) -> bool:
        """A user's mark: ``expected`` -> ``state``, fenced on the try that held the instance when read."""

    def set_ti_note(self, key: TIKey, note: str | None) -> None:
        """Set (None: remove) a user's note on an instance (a never-touched one gets a stateless item)."""

    def reset_ti(self, key: TIKey, *, expected: TaskInstanceState | None, expected_try_id: str | None,
                 fields: Mapping[str, Any]) -> bool:
        """A clear: ``expected`` -> no state (and no try id), fenced on ``expected_try_id``; the item keeps its
        try number so the next claim counts on from it."""

    def reset_item(self, key: TIKey, *, expected: TaskInstanceState | None, expected_try_id: str | None,
                   fields: Mapping[str, Any], held_ticket: str) -> TransactWrite:
        """``reset_ti``'s write (built, not sent) for an ``updraft.limits`` release: also conditional on the
        instance carrying ``held_ticket``, and removing it."""

    def delete_ti_item(self, key: TIKey, *, held_ticket: str) -> TransactWrite:
        """The instance's deletion (built, not sent) for an ``updraft.limits`` release, conditional on it
        carrying ``held_ticket``."""

    def record_try(self, ti: TaskInstance) -> bool:
        """Record a try before a clear or a retry supersedes it; False when that try number is recorded."""

    def get_tries(self, key: TIKey) -> list[TaskInstance]:
        """The recorded tries of one instance, oldest first."""

    def start_ti(self, key: TIKey, *, try_id: str, fields: Mapping[str, Any]) -> TaskInstance | None:
        """``queued -> running`` for exactly this try, returning the instance as written (None: not this
        worker's to run): the worker keeps it, so recording the outcome needs no read."""

    def set_rendered_fields(self, key: TIKey, *, try_id: str, rendered_fields: Mapping[str, Any]) -> bool:
        """Keep the running try's rendered template fields (serialized, redacted, within the item's budget) on
        its instance; False if the try is no longer the live one (a stale worker's fields are refused)."""

    def heartbeat(self, key: TIKey, *, try_id: str, lease_expires_at: dt.datetime) -> bool:
        """Extend a running try's lease; False if the try was ended by someone else (zombie fencing)."""

    def set_blocked_reason(self, key: TIKey, reason: str | None, *,
                           expected_state: TaskInstanceState = TaskInstanceState.SCHEDULED,
                           priority_weight: int | None = None) -> bool:
        """Record why the task instance is not queued (None clears it), only while it is in
        ``expected_state``; a claim to queued removes it. With ``priority_weight``, a scheduled instance given a
        reason enters its run's waiting index (``waiting_tis``) in the same write."""

    def waiting_tis(self, dag_id: str, run_id: str, *, limit: int) -> list[TIKey]:
        """The first ``limit`` scheduled instances of the run a claim refused, in claim order (priority weight
        descending, then map index), from an eventually consistent index: candidates to read strongly."""


class XComs(Protocol):
    """Task instances' XComs (``store.xcoms``), large values in S3."""

    def put_xcom(self, key: TIKey, xcom_key: str, value: Any, *, now: dt.datetime, shown: Any = None) -> None:
        """Set (overwrite) one XCom of a task instance; ``value`` must be JSON-able (large ones go to S3).
        ``shown``: the value with secrets masked, which the API shows instead (None: the value itself)."""

    def get_xcom(self, key: TIKey, xcom_key: str, default: Any = None) -> Any: ...

    def list_xcoms(self, dag_id: str, run_id: str, task_id: str,
                   map_index: int | None = None) -> dict[tuple[int, str], Any]:
        """(map_index, key) -> value for one task (all its map indexes unless one is given)."""

    def shown_xcoms(self, dag_id: str, run_id: str, task_id: str, map_index: int | None = None, *,
                    max_json_bytes: int | None = None) -> dict[tuple[int, str], Any]:
        """The XComs as the API shows them: secrets masked where the pushing try masked them. With
        ``max_json_bytes``, a value whose JSON is longer is ``store.blobs.Oversized`` (unread; 0: none is read)."""

    def delete_xcom(self, key: TIKey, xcom_key: str) -> bool:
        """Delete one XCom of a task instance (a user's, through the API); False when it did not exist."""

    def clear_xcoms(self, key: TIKey) -> int:
        """Delete a task instance's XComs before a new try runs, as Airflow does; returns how many."""


class DagDeletion(Protocol):
    """Deleting a DAG's and a run's partitions (``store.dag_deletion``; the policy is
    ``scheduling.commands.dag_deletion``)."""

    def delete_run_items(self, dag_id: str, run_id: str) -> int:
        """Delete every item of a run's partition (task instances, XComs); returns how many."""

    def delete_dag_items(self, dag_id: str) -> int:
        """Delete every item of a DAG's partition (runs, versions), its row last; returns how many."""


class Heartbeats(Protocol):
    """Components' heartbeats (``store.heartbeats``), for the API's health."""

    def heartbeat_component(self, component: str, now: dt.datetime, *, every: dt.timedelta) -> bool:
        """Record that ``component`` ran at ``now``, at most once per ``every`` per process."""

    def last_heartbeat(self, component: str) -> dt.datetime | None: ...


class Plugins(Protocol):
    """The plugins folder as the parser last loaded it (``store.plugins``)."""

    def record_plugins(self, report: PluginsReport, now: dt.datetime) -> bool:
        """Keep the latest parse's plugins report unless it is the stored one; True when written."""

    def get_plugins(self) -> PluginsReport | None: ...


class LongTasks(Protocol):
    """Tasks that outgrew Lambda (``store.long_tasks``): their later tries go to Fargate."""

    def remember_long_task(self, dag_id: str, task_id: str, *, executor: str, reason: str, now: dt.datetime,
                           compute: Mapping[str, int] | None = None) -> None:
        """Send the task's later tries to ``executor`` (Fargate, sized by ``compute``), because of ``reason``."""

    def dags_long_tasks(self, dag_ids: Iterable[str]) -> dict[tuple[str, str], dict[str, Any]]:
        """(dag_id, task_id) -> recorded executor and sizes, for every task of ``dag_ids`` with a record."""

    def forget_long_task(self, dag_id: str, task_id: str) -> None:
        """Drop the record (the task goes back to the executor it chose)."""


class Backfills(Protocol):
    """Backfills (``store.backfills``): one active per DAG, advanced by the scheduler."""

    def next_backfill_id(self) -> int: ...

    def create_backfill(self, backfill: Backfill) -> bool:
        """Store a new backfill as its DAG's active one; False when the DAG already has an active backfill."""

    def get_backfill(self, backfill_id: int) -> Backfill | None: ...

    def active_backfill_id(self, dag_id: str) -> int | None: ...

    def list_backfills(self, dag_id: str) -> list[Backfill]: ...

    def active_backfills(self, now: dt.datetime) -> list[Backfill]:
        """Every DAG's active backfill (at most one each)."""

    def set_backfill_paused(self, backfill_id: int, paused: bool, *, now: dt.datetime) -> bool:
        """False when it does not exist or has completed."""

    def advance_backfill(self, backfill_id: int, *, expected_created: int, created: int, now: dt.datetime) -> bool:
        """Move its progress on, only if no other scheduler did."""

    def complete_backfill(self, backfill_id: int, *, now: dt.datetime, pause: bool = False) -> bool:
        """Set completed_at (False: it was set already) and free the DAG for another backfill."""

    def runs_dated_between(self, dag_id: str, start: dt.datetime, end: dt.datetime) -> list[DagRun]:
        """The DAG's runs with a logical date in [start, end]."""


class Assets(Protocol):
    """Assets, aliases, their events and what each consuming DAG has queued (``store.assets``): the API, the
    scheduler's asset-triggered runs, a try's outlet events."""

    def declare_asset(self, *, name: str, uri: str | None, group: str | None, extra: Mapping[str, Any] | None,
                      now: dt.datetime, consumer: str | None = None, producer: str | None = None,
                      watchers: list[dict[str, Any]] | None = None) -> int:
        """Create or update the asset's definition (one idempotent update); returns its id. ``uri``, ``group``,
        ``extra`` and ``watchers`` left None keep what is stored (a reference by name knows only the name)."""

    def declare_alias(self, *, name: str, group: str, now: dt.datetime, consumer: str | None = None) -> None: ...

    def get_asset(self, asset_id: int) -> AssetRecord | None: ...

    def get_alias(self, name: str) -> AliasRecord | None: ...

    def list_assets(self) -> list[AssetRecord]: ...

    def list_aliases(self) -> list[AliasRecord]: ...

    def put_outlet_events(self, key: TIKey, try_number: int, events: list[dict[str, Any]],
                          now: dt.datetime) -> None:
        """Keep what a try will emit, before its success is recorded (the first write for the try wins)."""

    def get_outlet_events(self, key: TIKey, try_number: int) -> tuple[dt.datetime, list[dict[str, Any]]] | None: ...

    def put_asset_event(self, event: AssetEvent) -> bool:
        """Record the event; False when it was recorded before (a retried emission). ``ValueTooLarge`` when its
        extra does not fit one item."""

    def get_asset_event(self, asset_id: int, event_id: int) -> AssetEvent | None: ...

    def list_asset_events(self, asset_id: int, *, limit: int | None = None) -> list[AssetEvent]:
        """The asset's events, oldest first (the newest ``limit`` of them when given)."""

    def queue_event(self, dag_id: str, target: str, ref: str, *, asset_id: int | None, now: dt.datetime) -> None:
        """Add one event to what ``dag_id`` has queued for ``target`` (idempotent: the refs are a set)."""

    def list_queued_keys(self) -> list[tuple[str, str]]:
        """The keys of every queued (dag, target) and pending partition (:mod:`updraft.store.asset_partitions`
        lists its items here too): the scheduler's one query per tick for all asset-triggered work."""

    def dags_with_queued_events(self, listed: list[tuple[str, str]] | None = None) -> list[str]:
        """The DAGs with queued events, from ``listed`` (:meth:`list_queued_keys`) when the caller has it."""

    def read_queue(self, dag_id: str) -> tuple[TriggerCursor, list[QueuedTarget]]:
        """The DAG's cursor and queued targets in one strongly consistent query (the cursor is read first)."""

    def claim_batch(self, dag_id: str, *, expected: TriggerCursor, run_id: str, run_after: dt.datetime,
                    refs: Iterable[str]) -> TriggerCursor | None:
        """Claim the next batch (one conditional write on the cursor); None when another claim won."""

    def finish_batch(self, dag_id: str, cursor: TriggerCursor, targets: Iterable[QueuedTarget]) -> None:
        """Remove the batch's refs from the queue (idempotent), then mark the cursor done."""

    def delete_queued(self, dag_id: str, target: str | None = None) -> int:
        """Drop what the DAG has queued (for one target, or all): the API's DELETE of queued events."""

    def queued_targets(self, dag_id: str) -> list[QueuedTarget]: ...

    def put_triggering_events(self, dag_id: str, run_id: str, events: list[AssetEvent]) -> None: ...

    def get_triggering_events(self, dag_id: str, run_id: str) -> list[AssetEvent]: ...


class AssetPartitions(Protocol):
    """Partitioned assets' pending runs (``store.asset_partitions``): events mapped to a partition key, claimed
    into one run each."""

    def queue_partition(self, dag_id: str, partition_key: str, log: PartitionLog, *, now: dt.datetime) -> bool:
        """Map one event to the DAG's pending run for ``partition_key``; False when a run was already made of it.
        Idempotent: the logs are a set."""

    def pending_partitions(self, dag_id: str | None = None, *,
                           listed: list[tuple[str, str]] | None = None) -> list[PendingPartition]:
        """The pending (dag, key) items (of ``dag_id``, else of every DAG: from ``listed``, the asset queue's list
        of keys, when the caller has it), oldest first: Airflow fires the oldest pending partition first."""

    def claim_partition(self, pending: PendingPartition, *, run_id: str, run_after: dt.datetime,
                        logs: Iterable[str]) -> PendingPartition | None:
        """Claim the key's run made of ``logs`` (one conditional write); None when another claim won."""

    def finish_partition(self, claim: PendingPartition) -> None:
        """Move the claimed logs to ``done`` and end the claim (idempotent); an item with nothing left pending
        leaves the scheduler's list."""


class StateStores(Protocol):
    """Task instances' and assets' state stores (``store.state_stores``): keys a task keeps between tries, and
    an asset's keys."""

    def get_task_state(self, key: TIKey, state_key: str, *, now: dt.datetime) -> StateEntry | None:
        """The key's entry, or None when it is absent or expired (TTL deletion lags; expiry is exact here)."""

    def list_task_state(self, key: TIKey, *, now: dt.datetime) -> list[StateEntry]:
        """Every unexpired key of the task instance, by key."""

    def set_task_state(self, key: TIKey, state_key: str, value: Any, *, expires_at: dt.datetime | None,
                       now: dt.datetime) -> None:
        """Create or overwrite the key (one put: idempotent, the last write wins as in Airflow)."""

    def delete_task_state(self, key: TIKey, state_key: str) -> None:
        """Remove the key; a key that is not there is not an error."""

    def clear_task_state(self, key: TIKey) -> int:
        """Remove every key of the task instance; how many there were."""

    def get_asset_state(self, asset_name: str, state_key: str) -> StateEntry | None: ...

    def list_asset_state(self, asset_name: str) -> list[StateEntry]: ...

    def set_asset_state(self, asset_name: str, state_key: str, value: Any, *, now: dt.datetime,
                        writer: TIKey | None = None) -> None:
        """Create or overwrite the key; ``writer`` is the task instance that wrote it (None: the REST API, Airflow's
        writer kind ``api``)."""

    def delete_asset_state(self, asset_name: str, state_key: str) -> None: ...

    def clear_asset_state(self, asset_name: str) -> int: ...


class Variables(Protocol):
    """Airflow variables (``store.variables``), encrypted with the store's KMS key when it has one."""

    def get_variable(self, key: str) -> VariableRecord | None: ...

    def set_variable(self, key: str, value: str, description: str | None = None, *,
                     only_if_new: bool = False) -> VariableRecord | None:
        """Create or replace the variable; with ``only_if_new``, None (nothing written) when it exists.
        :class:`~updraft.store.errors.ValueTooLarge` when its value and description do not fit one item (or, with
        a KMS key, the value is over KMS's 4 KB)."""

    def delete_variable(self, key: str) -> bool:
        """False when there was no such variable."""

    def list_variables(self) -> list[VariableRecord]:
        """Every variable, by key (strongly consistent reads of what the index found)."""


class Connections(Protocol):
    """Airflow connections (``store.connections``), their secrets encrypted with the store's KMS key when it has
    one."""

    def get_connection(self, conn_id: str) -> ConnectionRecord | None: ...

    def put_connection(self, record: ConnectionRecord, *, only_if_new: bool = False) -> ConnectionRecord | None:
        """Create or replace the connection (every field as given); with ``only_if_new``, None (nothing
        written) when it exists. :class:`~updraft.store.errors.ValueTooLarge` when its fields do not fit one item
        (or, with a KMS key, its password and extra are over KMS's 4 KB)."""

    def delete_connection(self, conn_id: str) -> bool:
        """False when there was no such connection."""

    def list_connections(self) -> list[ConnectionRecord]: ...


class EventLogs(Protocol):
    """The audit log (``store.event_logs``): what users and components did, recorded once each."""

    def put_event_log(self, entry: EventLog) -> bool:
        """Record ``entry`` once: False when its id is already recorded (the same request delivered again)."""

    def get_event_log(self, event_log_id: int) -> EventLog | None: ...

    def list_event_logs(self, *, after: dt.datetime | None = None, before: dt.datetime | None = None
                        ) -> list[EventLog]:
        """Every entry with ``after < when < before`` (either bound optional), in id order: a key-range query
        per shard (the bounds' milliseconds), strongly consistent, then the exact bounds."""


class Pools(Protocol):
    """The pools Airflow users see (``store.pools``): their definitions and occupancy."""

    def get_pool(self, name: str) -> Pool | None:
        """The pool (default_pool always: created at its default size on first read)."""

    def list_pools(self) -> list[Pool]:
        """Every pool, by name (default_pool always)."""

    def pool_slots(self, name: str) -> int | None:
        """A pool's size (None: no such pool) in one read, for screening claims: no holders read."""

    def set_pool(self, name: str, slots: int, description: str = "", include_deferred: bool | None = None
                 ) -> Pool:
        """Create or resize a pool (``include_deferred`` None: unchanged, False for a new pool)."""

    def delete_pool(self, name: str) -> bool:
        """Delete a pool; default_pool cannot be deleted (raises)."""


class Store(Dags, Files, Runs, TaskInstances, XComs, DagDeletion, Heartbeats, Plugins, LongTasks, Backfills,
            Assets, AssetPartitions, StateStores, Variables, Connections, EventLogs, Pools, Protocol):
    """Every operation of the store, one protocol per aggregate: a function that needs one aggregate takes its
    protocol, one that needs several takes ``Store``. ``DynamoStore`` satisfies it (mypy checks
    ``store.dynamo.make_store``), so no caller tests what a store can do."""
