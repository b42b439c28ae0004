"""Item keys and index keys: the only place that knows how ids become ``pk``/``sk`` strings.

``#`` separates key parts. Every name a part carries goes through ``part`` (``model.key_parts``: ``#`` and ``%``
percent-encoded), so a key is injective whatever the names: a pool, variable, XCom or partition key may contain
``#``, and a DAG file can set a dag_id or task_id after its check. Valid dag, task and run ids contain neither
character, so their keys are the plain join. Shards come from a stable hash (CRC-32, not Python's salted ``hash``)
so every process puts the same item in the same shard.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import zlib

from updraft.model.key_parts import escaper, unescape
from updraft.model.records import TIKey
from updraft.store.attributes import ts

META = "META"
SEPARATOR = "#"
part = escaper(SEPARATOR)  # a name as one part of a key: its ``#`` and ``%`` escaped (unchanged when it has neither)


def shard(value: str, shards: int) -> int:
    return zlib.crc32(value.encode()) % shards


_blob_part = escaper("/.")  # an S3 key's folders, and its suffix (``.json.gz``)


def blob_path(*names: str | int) -> str:
    """The S3 key (below the store's prefix, before its ``.<suffix>``) of a large value named by ``names``: each
    name one folder level, with ``/``, ``.`` and ``%`` escaped, so names never cross a level, never make a ``..``
    level, and never reach into the suffix (XCom ``x.shown``'s value was XCom ``x``'s shown value)."""
    return "/".join(_blob_part(str(name)) for name in names)


def dag_pk(dag_id: str) -> str:
    return f"DAG#{part(dag_id)}"


def version_sk(dag_hash: str) -> str:
    return f"VERSION#{part(dag_hash)}"


def run_sk(run_id: str) -> str:
    return f"RUN#{part(run_id)}"


def run_pk(dag_id: str, run_id: str) -> str:
    """A run's own partition, its shard 0 (``run_shard_pk``): its task instances, their tries and XComs."""
    return f"RUN#{part(dag_id)}#{part(run_id)}"


def run_shard_pk(dag_id: str, run_id: str, shard_index: int) -> str:
    """Shard ``shard_index`` of a run's partition (``store.run_shards``): shard 0 is ``run_pk`` itself, the
    others add ``#<index>`` (the run's own parts never hold a bare ``#``, so no run's shard is another run's)."""
    pk = run_pk(dag_id, run_id)
    return pk if shard_index == 0 else f"{pk}#{shard_index}"


def ti_shard(task_id: str, map_index: int, shards: int) -> int:
    """The shard of a run's partition that holds a task instance and its tries and XComs: a task's id picks its
    start (CRC-32), and a mapped task's instances follow it round the shards by map index, so one expansion
    spreads evenly."""
    return (zlib.crc32(task_id.encode()) + max(map_index, 0)) % shards


def run_ends_pk(dag_id: str, run_id: str) -> str:
    """A run's ENDS counters (``count_ends``): a partition of their own, so a wide fan-in's one write per ended
    upstream adds nothing to the shards of the run's partition. It takes one write unit per ended instance, so it
    caps one run's ends at ~1,000 a second (a partition's write units)."""
    return f"ENDS#{part(dag_id)}#{part(run_id)}"


def ti_sk(task_id: str, map_index: int) -> str:
    # map_index + 1 zero-padded: the unmapped instance (-1) first, then map indexes in numeric order.
    return f"TI#{part(task_id)}#{map_index + 1:07d}"


TI_PREFIX = "TI#"


def ti_key_parts(sk: str) -> tuple[str, int]:
    """The task id and map index of a task instance's sort key (``ti_sk``'s inverse)."""
    task_id, _, index = sk.removeprefix(TI_PREFIX).rpartition("#")
    return unescape(task_id), int(index) - 1


# Priority weights are 32-bit in Airflow (``db_safe_priority``): inverted into this range, they sort highest first.
_PRIORITY_MAX = 2**31 - 1


def waiting_sk(priority_weight: int, map_index: int, task_id: str) -> str:
    """A waiting instance's place in its run's waiting index: Airflow's claim order within one run (priority
    weight descending, then map index; the task id last, so equal ones keep one order)."""
    inverted = _PRIORITY_MAX - max(-_PRIORITY_MAX - 1, min(_PRIORITY_MAX, priority_weight))
    return f"{inverted:010d}#{map_index + 1:07d}#{part(task_id)}"


# A run's bookkeeping for its mini scheduler (``scheduling.downstream``), next to its instances (deleted with the
# run's partition): counters of ended instances of its wide fan-ins, leaves and mapped tasks, the mapped tasks'
# expansions, and whether instances wait.
RUN_ENDS_SK = "ENDS"
TRY_PREFIX = "TRY#"


def try_sk(task_id: str, map_index: int, try_number: int) -> str:
    """A recorded try of a task instance (Airflow's task_instance_history row), next to its instance."""
    return f"{try_prefix(task_id, map_index)}{try_number:05d}"


def try_prefix(task_id: str, map_index: int) -> str:
    return f"TRY#{part(task_id)}#{map_index + 1:07d}#"
XCOM_PREFIX = "XCOM#"
# A run's callback fence: one item per callback request run (``RunStore.claim_callback``), deleted with the run.
CALLBACK_PREFIX = "CALLBACK#"


def callback_sk(request_id: str) -> str:
    return f"{CALLBACK_PREFIX}{part(request_id)}"



def xcom_sk(task_id: str, map_index: int, key: str) -> str:
    return f"XCOM#{part(task_id)}#{map_index + 1:07d}#{part(key)}"


def xcom_task_prefix(task_id: str, map_index: int | None) -> str:
    if map_index is None:
        return f"XCOM#{part(task_id)}#"
    return f"XCOM#{part(task_id)}#{map_index + 1:07d}#"


# A limit id longer than this is named in keys by its digest: a run's or a task's limit id carries a dag_id, a
# run_id and a task_id (250 characters each in Airflow), which would fill a 1 KB limit item on its own.
LIMIT_KEY_MAX = 64


def _digest(value: str, size: int) -> str:
    """A short, stable, key-safe name for ``value`` (base64url of a BLAKE2b digest: no ``.``, ``[`` or ``]``)."""
    return base64.urlsafe_b64encode(hashlib.blake2b(value.encode(), digest_size=size).digest()).decode().rstrip("=")


def limit_pk(limit_id: str) -> str:
    """The partition of a limit's root counter (its shard 0) and of a pool's record. A limit id
    (``model.limits``) never starts with ``~``, so a name kept whole never equals a digest's."""
    name = part(limit_id)
    return f"LIMIT#{name if len(name) <= LIMIT_KEY_MAX else '~' + _digest(limit_id, 15)}"


def limit_shard_pk(limit_id: str, shard_index: int) -> str:
    """Shard ``shard_index`` of a limit: shard 0 is the root, the others are items of their own partition key, so
    a busy limit spreads over partitions."""
    return limit_pk(limit_id) if shard_index == 0 else f"{limit_pk(limit_id)}#{shard_index}"


COUNTER_SK = "COUNTER"


def counter_key(limit_id: str, shard_index: int) -> dict[str, dict[str, str]]:
    """The key (low-level attribute values) of shard ``shard_index`` of a limit's counters (``updraft.limits``;
    shard 0 is the root). A pool's record shares the root's partition key under another sort key."""
    return {"pk": {"S": limit_shard_pk(limit_id, shard_index)}, "sk": {"S": COUNTER_SK}}


POOL_SK = "POOL"  # a pool's record (name, slots, description, include_deferred), beside its limit's counters


def file_pk(relative_path: str) -> str:
    return f"FILE#{part(relative_path)}"


def run_date_sk(sort_date: dt.datetime, run_id: str) -> str:
    """LSI sort key: the run's logical date (or run_after when it has none), then run_id for uniqueness."""
    return f"{ts(sort_date)}#{part(run_id)}"


def dags_list_pk(dag_id: str, shards: int) -> str:
    return dags_list_shard_pk(shard(dag_id, shards))


def dags_list_shard_pk(index: int) -> str:
    """Shard ``index`` of the DAG list index (a lister queries every shard)."""
    return f"DAGS#{index}"


POOLS_LIST_PK = "POOLS"  # pools are few and their list entry never changes: one partition is enough


def import_errors_list_pk(relative_path: str, shards: int) -> str:
    return import_errors_shard_pk(shard(relative_path, shards))


def import_errors_shard_pk(index: int) -> str:
    return f"IMPORT_ERRORS#{index}"


def due_pk(dag_id: str, shards: int) -> str:
    return due_shard_pk(shard(dag_id, shards))


def due_shard_pk(index: int) -> str:
    return f"DUE#{index}"


def active_pk(dag_id: str, run_id: str, shards: int) -> str:
    # Sharded by run, not by DAG: one DAG with many active runs spreads over every shard.
    return active_shard_pk(shard(f'{dag_id}#{run_id}', shards))


def active_shard_pk(index: int) -> str:
    return f"ACTIVE#{index}"


def active_sk(sort_date: dt.datetime, dag_id: str, run_id: str) -> str:
    return f"{ts(sort_date)}#{part(dag_id)}#{part(run_id)}"


def variable_pk(key: str) -> str:
    return f"VARIABLE#{part(key)}"


def connection_pk(conn_id: str) -> str:
    return f"CONNECTION#{part(conn_id)}"


VARIABLES_LIST_PK = "VARIABLES"  # the API lists them whole (Airflow orders and pages in memory too)
CONNECTIONS_LIST_PK = "CONNECTIONS"


def backfill_pk(backfill_id: int) -> str:
    return f"BACKFILL#{backfill_id}"


def backfill_list_pk(dag_id: str) -> str:
    """A DAG's backfills in the list index (a DAG has few, so one partition each)."""
    return f"BACKFILLS#{part(dag_id)}"


def backfill_list_sk(backfill_id: int) -> str:
    # zero-padded: the index orders a DAG's backfills (and the active ones) by id
    return f"{backfill_id:012d}"


def active_backfill_pk(dag_id: str) -> str:
    """The DAG's one active backfill: created with a condition, so a second one is refused."""
    return f"ACTIVE_BACKFILL#{part(dag_id)}"


ACTIVE_BACKFILLS_LIST_PK = "ACTIVE_BACKFILLS"  # few at once: one partition, read every tick
BACKFILL_SEQUENCE_PK = "BACKFILL_SEQUENCE"  # the last backfill id handed out (Airflow's ids are integers)


# -- events ---------------------------------------------------------------------------------------------------------
EVENT_PREFIX = "EVENT#"
EVENT_ID_DIGITS = 19  # int64 ids, zero-padded so string order is numeric order


def event_sk(event_id: int) -> str:
    """An event's sort key in its partition (an event log entry's, an asset event's): ordered by id."""
    return f"{EVENT_PREFIX}{event_id:0{EVENT_ID_DIGITS}d}"


def event_logs_shard_pk(index: int) -> str:
    """Shard ``index`` of the event log (the audit log): a lister queries every shard."""
    return f"EVENTS#{index}"


def event_log_pk(event_log_id: int, shards: int) -> str:
    return event_logs_shard_pk(event_log_id % shards)


# -- assets ---------------------------------------------------------------------------------------------------------
ASSETS_LIST_PK = "ASSETS"
ASSET_ALIASES_LIST_PK = "ASSET_ALIASES"
# Every queued (dag, target) and pending partition: the scheduler's one query per tick.
ASSET_QUEUES_LIST_PK = "ASSET_QUEUES"
TRIGGER_CURSOR_SK = "CURSOR"  # a DAG's last asset-triggered batch, first in its queue partition


def asset_pk(asset_id: int) -> str:
    return f"ASSET#{asset_id}"


def asset_alias_pk(name: str) -> str:
    return f"ASSET_ALIAS#{part(name)}"


def asset_queue_pk(dag_id: str) -> str:
    """A DAG's queue of asset events not yet turned into a run (``asset_queue_pk("")``: every DAG's prefix)."""
    return f"ASSET_QUEUE#{part(dag_id)}"


def queued_target_sk(target: str) -> str:
    """What a DAG has queued for one target (``asset:<name>`` or ``alias:<name>``), in its queue partition."""
    return f"TARGET#{target}"


def queued_list_sk(dag_id: str, name: str) -> str:
    """A queued target's or a pending partition's entry in the asset queues list (``ASSET_QUEUES_LIST_PK``)."""
    return f"{part(dag_id)}#{name}"


def outlet_sk(key: TIKey, try_number: int) -> str:
    """What a try will emit on success, in its run's partition."""
    return f"OUTLET#{part(key.task_id)}#{key.map_index + 1:07d}#{try_number:05d}"


def asset_trigger_sk(run_id: str) -> str:
    """The events an asset-triggered run was made of, in its DAG's partition."""
    return f"ASSET_TRIGGER#{part(run_id)}"


def asset_partition_pk(dag_id: str) -> str:
    """A DAG's pending asset partitions (``asset_partition_pk("")``: every DAG's prefix)."""
    return f"ASSET_PARTITION#{part(dag_id)}"


# -- named values: a task's or an asset's state store entries, a DAG's pending partitions -------------------------
KEY_PREFIX = "KEY#"


def state_sk(state_key: str) -> str:
    return f"{KEY_PREFIX}{state_key}"


def partition_sk(partition_key: str) -> str:
    return f"{KEY_PREFIX}{partition_key}"


def task_state_pk(key: TIKey) -> str:
    return f"TASK_STATE#{part(key.dag_id)}#{part(key.run_id)}#{part(key.task_id)}#{key.map_index + 1:07d}"


def asset_state_pk(asset_id: int) -> str:
    return f"ASSET_STATE#{asset_id}"


# -- components and tasks -----------------------------------------------------------------------------------------
HEARTBEAT_SK = "HEARTBEAT"
PLUGINS_KEY = "PLUGINS"  # the parser's last plugins report: one item, this its pk and its sk
LONG_TASK_PREFIX = "LONG_TASK#"


def heartbeat_pk(component: str) -> str:
    return f"HEARTBEAT#{part(component)}"


def long_task_sk(task_id: str) -> str:
    """A task that ran too long for Lambda, remembered in its DAG's partition."""
    return f"{LONG_TASK_PREFIX}{part(task_id)}"
