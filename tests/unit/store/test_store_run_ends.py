"""A run's ENDS counters live in a partition of their own: a wide fan-in's count per ended upstream must not add
a write to the run's partition (the one key a wide run's instances share), and deleting the run removes them."""

from __future__ import annotations

from updraft.store import keys


def test_ends_counters_are_outside_the_runs_partition_and_go_with_the_run(store):
    assert store.count_ends("d", "r", ["join", None]).counts == {"join": 1, None: 1}
    assert store.count_ends("d", "r", ["join"]).counts == {"join": 2, None: 1}
    T = store.models.task_instance
    assert [i.sk for i in T.query(keys.run_pk("d", "r"))] == []
    assert [i.sk for i in T.query(keys.run_ends_pk("d", "r"))] == [keys.RUN_ENDS_SK]
    _, _, _, ends = store.get_run_meta_and_tis("d", "r", [])
    assert ends.counts == {"join": 2, None: 1}
    assert store.delete_run_items("d", "r") == 1
    assert list(T.query(keys.run_ends_pk("d", "r"))) == []


def test_a_mapped_tasks_expansion_is_recorded_beside_its_count_and_task_group_ids_stay_one_attribute(store):
    # A task group's task id has a dot: one attribute, not a path into a map (whose update would fail).
    store.record_expansions("d", "m", {"group.mapped": 3})
    store.record_expansions("d", "m", {"group.mapped": 3})  # another evaluation expanding it: the same number
    ends = store.count_ends("d", "m", ["group.mapped"])
    assert (ends.counts, ends.expanded) == ({"group.mapped": 1}, {"group.mapped": 3})
    store.record_expansions("d", "m", {"group.mapped": 5})  # a re-expansion (a cleared run) writes its own
    _, _, _, ends = store.get_run_meta_and_tis("d", "m", [])
    assert (ends.counts, ends.expanded) == ({"group.mapped": 1}, {"group.mapped": 5})
