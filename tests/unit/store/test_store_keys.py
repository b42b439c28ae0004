"""Every key built from user-chosen names is injective (issue 34): names holding every separator a layout uses
(``#`` in item and index keys, ``:`` in limit ids, ``/`` and ``.`` in S3 keys) and the escape
character ``%`` never make two inputs one key, and splitting a key gives its names back. Keys of names holding none
of those characters are the plain join, as before escaping existed (local mode's saved state still reads)."""

from __future__ import annotations

import datetime as dt
import string
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from updraft.model import limits
from updraft.model.key_parts import escaper, unescape
from updraft.model.records import TIKey
from updraft.store import keys

SEPARATORS = "#:|/.%"
# Names built mostly of separators, escapes and things that look like escapes or key parts, so collisions that a
# plain join would make are drawn often; plus any text.
names = st.one_of(st.lists(st.sampled_from([*SEPARATORS, "a", "1", "~", "%23", "#1", "N", "0000000"]),
                           max_size=8).map("".join), st.text(max_size=6))
pool_limits = names.map(limits.pool_limit)
map_indexes = st.integers(min_value=-1, max_value=9_999_998)
WHEN = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
VALID_ID = st.text(alphabet=string.ascii_letters + string.digits + "_.-", min_size=1, max_size=20)
VALID_RUN_ID = st.text(alphabet=string.ascii_letters + string.digits + "_.~:+-", min_size=1, max_size=20)


def _split(key: str, prefix: str) -> list[str]:
    """The names of a key: its parts after ``prefix``, unescaped (what any reader splitting it would do)."""
    assert key.startswith(prefix)
    return [unescape(p) for p in key.removeprefix(prefix).split(keys.SEPARATOR)]


# Every item and index key builder whose parts carry names: (builder, how to draw its arguments, its prefix).
ITEM_KEYS: list[tuple[Callable[..., str], tuple[st.SearchStrategy, ...], str]] = [
    (keys.dag_pk, (names,), "DAG#"),
    (keys.version_sk, (names,), "VERSION#"),
    (keys.run_sk, (names,), "RUN#"),
    (keys.run_pk, (names, names), "RUN#"),
    (keys.run_ends_pk, (names, names), "ENDS#"),
    (keys.ti_sk, (names, map_indexes), "TI#"),
    (keys.try_sk, (names, map_indexes, st.integers(0, 99_999)), "TRY#"),
    (keys.xcom_sk, (names, map_indexes, names), "XCOM#"),
    (keys.waiting_sk, (st.integers(-(2**31), 2**31 - 1), map_indexes, names), ""),
    (keys.file_pk, (names,), "FILE#"),
    (lambda run_id: keys.run_date_sk(WHEN, run_id), (names,), ""),
    (lambda dag_id, run_id: keys.active_sk(WHEN, dag_id, run_id), (names, names), ""),
    (keys.variable_pk, (names,), "VARIABLE#"),
    (keys.connection_pk, (names,), "CONNECTION#"),
    (keys.backfill_list_pk, (names,), "BACKFILLS#"),
    (keys.active_backfill_pk, (names,), "ACTIVE_BACKFILL#"),
    (keys.limit_shard_pk, (pool_limits, st.integers(0, 999)), "LIMIT#"),
    (keys.asset_alias_pk, (names,), "ASSET_ALIAS#"),
    (keys.asset_queue_pk, (names,), "ASSET_QUEUE#"),
    (lambda task_id, map_index, try_number: keys.outlet_sk(TIKey("d", "r", task_id, map_index), try_number),
     (names, map_indexes, st.integers(0, 99_999)), "OUTLET#"),
    (keys.asset_trigger_sk, (names,), "ASSET_TRIGGER#"),
    (keys.asset_partition_pk, (names,), "ASSET_PARTITION#"),
    (lambda d, r, t, m: keys.task_state_pk(TIKey(d, r, t, m)), (names, names, names, map_indexes), "TASK_STATE#"),
    (keys.heartbeat_pk, (names,), "HEARTBEAT#"),
    (keys.long_task_sk, (names,), "LONG_TASK#"),
]


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_every_item_key_splits_back_into_its_names_and_two_inputs_never_share_a_key(data) -> None:
    for builder, strategies, prefix in ITEM_KEYS:
        first = tuple(data.draw(s) for s in strategies)
        second = tuple(data.draw(s) for s in strategies)
        key = builder(*first)
        # Every string argument is one part of the key, in order, recovered whole whatever separators it holds.
        remaining = iter(_split(key, prefix))
        assert all(any(part == name for part in remaining) for name in first if isinstance(name, str)), (
            builder, first, key)
        assert (builder(*first) == builder(*second)) == (first == second), (builder, first, second)


@settings(max_examples=150, deadline=None)
@given(dag_id=names, run_id=names, task_id=names, key=names, map_index=map_indexes, a=names, b=names)
def test_keys_split_back_exactly(dag_id, run_id, task_id, key, map_index, a, b) -> None:
    """The keys a plain join made ambiguous, split back part by part: ``#`` inside a name never shifts a part."""
    assert _split(keys.run_pk(dag_id, run_id), "RUN#") == [dag_id, run_id]
    assert _split(keys.xcom_sk(task_id, map_index, key), "XCOM#") == [task_id, f"{map_index + 1:07d}", key]
    assert _split(keys.active_sk(WHEN, dag_id, run_id), "")[1:] == [dag_id, run_id]
    assert _split(keys.limit_shard_pk(limits.pool_limit(a), 4), "LIMIT#") == [limits.pool_limit(a), "4"]
    assert keys.ti_key_parts(keys.ti_sk(task_id, map_index)) == (task_id, map_index)
    assert keys.xcom_sk(task_id, map_index, key).startswith(keys.xcom_task_prefix(task_id, map_index))
    assert keys.xcom_sk(task_id, map_index, key).startswith(keys.xcom_task_prefix(task_id, None))
    if a != task_id:  # another task's prefix never selects this task's XComs
        assert not keys.xcom_sk(task_id, map_index, key).startswith(keys.xcom_task_prefix(a, None))
        assert not keys.try_sk(task_id, map_index, 1).startswith(keys.try_prefix(a, map_index))


@settings(max_examples=150, deadline=None)
@given(pools=st.lists(names, min_size=2, max_size=4, unique=True), index=st.integers(1, 999))
def test_a_pools_items_are_never_another_pools(pools, index) -> None:
    """The issue's attack and its kin: a pool's root and shard partitions never share a key with any item of
    another pool (``victim#1`` was ``victim``'s shard 1)."""
    by_pool = {p: {keys.limit_pk(limits.pool_limit(p)), keys.limit_shard_pk(limits.pool_limit(p), index)}
               for p in pools}
    for p in pools:
        for q in pools:
            if p != q:
                assert not by_pool[p] & by_pool[q], (p, q)
    assert keys.limit_pk(limits.pool_limit("victim#1")) != keys.limit_shard_pk(limits.pool_limit("victim"), 1)


LIMIT_KINDS: list[tuple[Callable[..., str], int]] = [
    (limits.pool_limit, 1), (limits.run_tasks_limit, 2), (limits.dag_runs_limit, 1), (limits.task_limit, 2),
    (limits.task_run_limit, 3), (limits.backfill_runs_limit, 1), (lambda: limits.PARALLELISM_LIMIT, 0),
]


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_limit_ids_and_their_keys_are_injective(data) -> None:
    """Two limits (of any kinds, over any names) have distinct ids and distinct root and shard keys; a long one's
    digest never equals a short one's name; only pool names are read back, and exactly."""
    drawn = []
    for builder, arity in LIMIT_KINDS:
        for _ in range(2):
            args = tuple(data.draw(names) for _ in range(arity))
            drawn.append(((builder, args), builder(*args)))
    for (origin_a, limit_a) in drawn:
        assert not limit_a.startswith("~")
        for (origin_b, limit_b) in drawn:
            same = origin_a[0] is origin_b[0] and origin_a[1] == origin_b[1]
            assert (limit_a == limit_b) == same, (origin_a, origin_b, limit_a)
            assert (keys.limit_pk(limit_a) == keys.limit_pk(limit_b)) == same
            assert keys.limit_shard_pk(limit_a, 1) != keys.limit_pk(limit_b)
    pool = data.draw(names)
    assert limits.pool_of(limits.pool_limit(pool)) == pool


@settings(max_examples=150, deadline=None)
@given(first=st.lists(names, min_size=1, max_size=5), second=st.lists(names, min_size=1, max_size=5))
def test_s3_blob_keys_are_injective_and_never_climb_or_reach_the_suffix(first, second) -> None:
    """``keys.blob_path``: ``/`` never crosses a level, no level is ``.`` or ``..``, and a name's ``.`` never
    reaches the suffix (XCom ``x.shown``'s value was XCom ``x``'s shown value)."""
    path_a, path_b = keys.blob_path(*first), keys.blob_path(*second)
    assert [unescape(level) for level in path_a.split("/")] == first
    assert (path_a == path_b) == (first == second)
    assert not {".", ".."} & set(path_a.split("/"))
    assert f"{path_a}.json.gz" != f"{path_b}.shown.json.gz"
    assert keys.blob_path("x", "k.shown") + ".json.gz" != keys.blob_path("x", "k") + ".shown.json.gz"


@settings(max_examples=500, deadline=None)
@given(name=st.text(), separators=st.sampled_from(["#", ":", "|", "/.", "#:|/."]))
def test_escape_is_reversible_leaves_no_separator_and_changes_nothing_else(name, separators) -> None:
    escaped = escaper(separators)(name)
    assert unescape(escaped) == name
    assert not any(c in escaped for c in separators)
    if "%" not in name and not any(c in name for c in separators):
        assert escaped is name


@settings(max_examples=200, deadline=None)
@given(dag_id=VALID_ID, run_id=VALID_RUN_ID, task_id=VALID_ID, map_index=map_indexes)
def test_keys_of_valid_ids_are_the_plain_joins_they_always_were(dag_id, run_id, task_id, map_index):
    """Byte for byte what the keys were before escaping: saved local state and existing tables still read."""
    assert keys.run_pk(dag_id, run_id) == f"RUN#{dag_id}#{run_id}"
    assert keys.ti_sk(task_id, map_index) == f"TI#{task_id}#{map_index + 1:07d}"
    assert keys.xcom_sk(task_id, map_index, "return_value") == f"XCOM#{task_id}#{map_index + 1:07d}#return_value"
    assert keys.active_sk(WHEN, dag_id, run_id).endswith(f"#{dag_id}#{run_id}")
    assert limits.task_run_limit(dag_id, run_id, task_id) == f"task_run:{dag_id}:{run_id}:{task_id}"
    assert limits.run_tasks_limit(dag_id, run_id) == f"run_tasks:{dag_id}:{run_id}"
    assert keys.limit_pk(limits.pool_limit("default_pool")) == "LIMIT#pool:default_pool"
    # A long limit id is still named by the digest of the id itself.
    long_id = limits.run_tasks_limit("etl_" * 10, "scheduled__2024-01-01T00:00:00+00:00")
    assert keys.limit_pk(long_id) == "LIMIT#~" + keys._digest(long_id, 15)
