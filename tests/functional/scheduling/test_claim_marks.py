"""A tick's claim marks its sharded limits in one write (``claims.Marks``): a task in a named pool takes the pool
and parallelism, both spread over shards, and marks its holder for both with one UpdateItem, not one per take;
the marks of the limits a refused claim did not take are removed, so the try is claimable again at once."""

from __future__ import annotations

from moto import mock_aws

from airflow.sdk import DAG, task
from tests.dynamo_requests import dynamo_requests
from tests.functional.scheduling.harness import START, Clock, key, make_store, scheduler_for, store_dags
from updraft.model.limits import PARALLELISM_LIMIT, pool_limit
from updraft.scheduling.triggering import trigger_dag
from updraft.store import keys
from updraft.store.dynamo import DynamoStore

WIDE = 40  # the pool's and parallelism's size: more than a root's 4 slots, so both are spread over shards


def _marks(store: DynamoStore, holder: str) -> set[str]:
    """The limits' mark attributes on the holder's marker item (read raw: a mark is an attribute per limit)."""
    item = store.models.limit._get_connection().get_item(
        keys.holder_marker_pk(keys.holder_key(holder)), keys.HOLDER_MARKER_SK, consistent_read=True)
    return {name for name in item.get("Item", {}) if name.startswith("m_")}


def _environment(store: DynamoStore, clock: Clock, *, pool_size: int, held: int, tasks: int) -> None:
    """A pool of ``pool_size`` holding ``held`` others and parallelism holding 6, both spread over shards, and
    one run of a DAG whose ``tasks`` tasks all use the pool."""
    store.set_pool("wide", pool_size)
    for n in range(held):
        assert store.take_slots(pool_limit("wide"), f"other-{n}", 1, limit=pool_size, now=clock())
    for n in range(6):
        assert store.take_slots(PARALLELISM_LIMIT, f"other-{n}", 1, limit=WIDE, now=clock())
    assert store.batchable(pool_limit("wide"), 1) and store.batchable(PARALLELISM_LIMIT, 1)
    dag = DAG("pooled", schedule=None, start_date=START)

    @task(dag=dag, pool="wide")
    def work():
        return None

    with dag:
        for n in range(tasks):
            work.override(task_id=f"t{n}")()
    store_dags(store, dag, now=clock())
    trigger_dag(store, "pooled", now=clock(), run_id="r")


def _mark_writes(requests) -> list:
    return [r for r in requests if r.sk == keys.HOLDER_MARKER_SK and r.operation in ("PutItem", "UpdateItem")
            and not r.update.startswith("REMOVE")]


def test_a_claim_marks_the_pool_and_parallelism_in_one_write():
    with mock_aws():
        store = make_store("claim-marks")
        clock = Clock()
        _environment(store, clock, pool_size=WIDE, held=6, tasks=3)
        scheduler, executor = scheduler_for(store, clock, parallelism=WIDE)
        with dynamo_requests() as requests:
            scheduler.run_pass()
        claimed = executor.take()
        assert len(claimed) == 3
        assert len(_mark_writes(requests)) == 3, "one mark write per claim (two: one per sharded limit)"
        for dispatch in claimed:
            holder = dispatch.key.holder(dispatch.try_number)
            assert _marks(store, holder) == {keys.marker_attribute(pool_limit("wide")),
                                             keys.marker_attribute(PARALLELISM_LIMIT)}
            assert store.get_limit(pool_limit("wide")).holders[holder] == 1
            assert store.get_limit(PARALLELISM_LIMIT).holders[holder] == 1


def test_a_claim_the_pool_refuses_leaves_no_mark():
    with mock_aws():
        store = make_store("claim-marks-refused")
        clock = Clock()
        _environment(store, clock, pool_size=8, held=7, tasks=3)  # one slot left
        scheduler, executor = scheduler_for(store, clock, parallelism=WIDE)
        scheduler.run_pass()
        claimed = executor.take()
        assert len(claimed) == 1
        assert sum(store.get_limit(pool_limit("wide")).holders.values()) == 8
        refused = [key("pooled", "r", f"t{n}").holder(1) for n in range(3)]
        refused.remove(claimed[0].key.holder(claimed[0].try_number))
        for holder in refused:
            assert _marks(store, holder) == set(), holder
            assert holder not in store.get_limit(PARALLELISM_LIMIT).holders
        assert store.release_slots(pool_limit("wide"), "other-0")  # a slot back: the next claims one at once
        scheduler.run_pass()
        assert len(executor.take()) == 1
