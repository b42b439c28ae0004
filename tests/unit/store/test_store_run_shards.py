"""A wide run's partition spreads over shards (``store.run_shards``): the count chosen at creation from the pinned
DAG, every item of an instance in its shard, whole-run reads and deletions over every shard, and a run item
written before runs carried a count read as one shard."""

from __future__ import annotations

import collections
import dataclasses

import pendulum
import pytest
from store_helpers import dag_doc

from updraft.model.records import DagRun, TaskInstance, TIKey
from updraft.model.states import DagRunState, TaskInstanceState
from updraft.serialization import deserialize_dag
from updraft.store import keys, run_shards
from updraft.store.dynamo import DynamoStore

NOW = pendulum.datetime(2024, 1, 3, tz="UTC")
WIDE = tuple(f"m{i:03d}" for i in range(300))  # 300 tasks: five shards of 64


def _raw_pks(store: DynamoStore, prefix: str) -> collections.Counter[str]:
    """Items per partition key whose key starts with ``prefix`` (a scan: the test's own view of the table)."""
    T = store.models.task_instance
    return collections.Counter(i.pk for i in T.scan() if i.pk.startswith(prefix))


def _wide_run(store: DynamoStore, run_id: str = "r") -> DagRun:
    store.put_version("wide", "h", dag_doc("wide", tasks=WIDE), NOW)
    run = DagRun("wide", run_id, "manual", "h", logical_date=NOW, run_after=NOW)
    assert store.create_run(run)
    return run


def test_the_shard_count_follows_the_dag_s_width_and_a_mapped_task_counts_as_a_wide_one():
    def shards(tasks: tuple[str, ...]) -> int:
        return run_shards.shards_for(deserialize_dag(dag_doc("d", tasks=tasks)))

    assert shards(("t",)) == shards(tuple(f"t{i}" for i in range(64))) == 1
    assert shards(tuple(f"t{i}" for i in range(65))) == 2
    assert shards(WIDE) == 5
    assert shards(tuple(f"t{i}" for i in range(5000))) == run_shards.MAX_SHARDS
    mapped = deserialize_dag(dag_doc("d", tasks=("a", "b", "c", "d", "e")))
    mapped.tasks[0] = dataclasses.replace(mapped.tasks[0], is_mapped=True)
    assert run_shards.shards_for(mapped) == 5  # 256 + 4 instances
    for i in range(1, 5):
        mapped.tasks[i] = dataclasses.replace(mapped.tasks[i], is_mapped=True)
    assert run_shards.shards_for(mapped) == run_shards.MAX_SHARDS


def test_shard_keys_name_one_run_and_spread_a_task_s_map_indexes_evenly():
    assert keys.run_shard_pk("d", "r", 0) == keys.run_pk("d", "r")
    shard_pks = {keys.run_shard_pk("d", "r", i) for i in range(16)}
    # No run's shard is another run's partition: run ids cannot hold a bare '#'.
    assert len(shard_pks) == 16 and keys.run_pk("d", "r#1") not in shard_pks
    by_index = collections.Counter(keys.ti_shard("mapped", i, 16) for i in range(160))
    assert by_index == {shard: 10 for shard in range(16)}
    assert keys.ti_shard("t", -1, 16) == keys.ti_shard("t", 0, 16)
    assert all(keys.ti_shard(f"t{i}", -1, 1) == 0 for i in range(50))


def test_a_wide_run_s_instances_tries_and_xcoms_spread_and_read_back_whole(store: DynamoStore):
    run = _wide_run(store)
    assert run.ti_shards == 5 and store.get_run("wide", "r").ti_shards == 5
    for task_id in WIDE:
        assert store.create_ti(TIKey("wide", "r", task_id), state=TaskInstanceState.SCHEDULED)
    spread = _raw_pks(store, keys.run_pk("wide", "r"))
    assert set(spread) == {keys.run_shard_pk("wide", "r", i) for i in range(5)}
    assert max(spread.values()) < 2 * 300 / 5  # no shard holds twice its share

    tis = store.get_run_tis("wide", "r")
    assert [ti.task_id for ti in tis] == list(WIDE)  # one run's order, as one partition gave it

    key = TIKey("wide", "r", "m123")
    store.put_xcom(key, "return_value", {"n": 123}, now=NOW)
    assert store.get_xcom(key, "return_value") == {"n": 123}
    assert store.list_xcoms("wide", "r", "m123") == {(-1, "return_value"): {"n": 123}}
    assert store.record_try(TaskInstance("wide", "r", "m123", state=TaskInstanceState.FAILED, try_number=1))
    assert [t.try_number for t in store.get_tries(key)] == [1]
    expected_pk = keys.run_shard_pk("wide", "r", keys.ti_shard("m123", -1, 5))
    T = store.models.task_instance
    assert {i.sk for i in T.query(expected_pk) if "m123" in i.sk} == {
        keys.ti_sk("m123", -1), keys.try_sk("m123", -1, 1), keys.xcom_sk("m123", -1, "return_value")}


def test_whole_run_reads_share_the_process_s_shard_readers(store: DynamoStore):
    """A wide run's shards are read at once by threads kept for the process, not started per read."""
    import threading

    _wide_run(store)
    for task_id in WIDE[:20]:
        assert store.create_ti(TIKey("wide", "r", task_id), state=TaskInstanceState.SCHEDULED)

    def readers() -> set[int]:
        return {t.ident for t in threading.enumerate() if t.name.startswith("run-shards") and t.ident}

    assert [ti.task_id for ti in store.get_run_tis("wide", "r")] == list(WIDE[:20])
    first = readers()
    assert 0 < len(first) <= run_shards.MAX_SHARDS
    for _ in range(3):
        assert len(store.get_run_tis("wide", "r")) == 20
    assert first <= readers() and len(readers()) <= run_shards.MAX_SHARDS  # the first read's threads stayed


def test_another_process_finds_the_run_s_instances_from_the_run_s_item(store: DynamoStore, s3):
    _wide_run(store)
    key = TIKey("wide", "r", "m007")
    assert store.create_ti(key, state=TaskInstanceState.SCHEDULED)
    other = DynamoStore(store.config, s3_client=s3)  # knows nothing of the run yet
    assert other.get_ti(key) is not None and other.run_shard_count("wide", "r") == 5
    told = DynamoStore(store.config, s3_client=s3)
    told.remember_run_shards("wide", "r", 5)  # as a dispatch carrying the run tells a worker
    assert told.get_ti(key) is not None


def test_a_run_item_without_a_count_is_one_shard(store: DynamoStore, s3):
    # An item written before runs carried a count: every instance sits in the run's one partition.
    store.put_version("wide", "h", dag_doc("wide", tasks=WIDE), NOW)
    R = store.models.run
    R(keys.dag_pk("wide"), keys.run_sk("old"), dag_id="wide", run_id="old", run_type="manual", dag_hash="h",
      state=str(DagRunState.RUNNING)).save()
    fresh = DynamoStore(store.config, s3_client=s3)
    assert fresh.get_run("wide", "old").ti_shards == 1
    for task_id in WIDE[:10]:
        assert fresh.create_ti(TIKey("wide", "old", task_id), state=TaskInstanceState.SCHEDULED)
    assert set(_raw_pks(store, keys.run_pk("wide", "old"))) == {keys.run_pk("wide", "old")}
    assert len(fresh.get_run_tis("wide", "old")) == 10


@pytest.mark.parametrize("process", ["same", "after a crash"])
def test_deleting_a_run_s_partition_empties_every_shard(store: DynamoStore, s3, process: str):
    _wide_run(store)
    for task_id in WIDE:
        store.create_ti(TIKey("wide", "r", task_id), state=TaskInstanceState.SUCCESS)
    store.put_xcom(TIKey("wide", "r", "m200"), "return_value", 1, now=NOW)
    deleter = store
    if process == "after a crash":  # the run's item went, then the process died before its partition did
        assert store.delete_run("wide", "r", expected=[DagRunState.QUEUED])
        deleter = DynamoStore(store.config, s3_client=s3)
    assert deleter.delete_run_partition("wide", "r") == len(WIDE) + 1
    assert not _raw_pks(store, keys.run_pk("wide", "r"))
