"""Holder markers of sharded limits: a take is one mark and one shard write, with no read of the limit, and a
holder that holds (wherever it sits) is refused without one; a crash's mark blocks only for a while; a claim's
limits are marked in one write."""

from __future__ import annotations

import pendulum
import pytest
from botocore.client import BaseClient

from updraft.model.limits import pool_limit
from updraft.store import keys, limit_markers, limit_shards
from updraft.store.dynamo import DynamoStore
from updraft.store.limit_api import Taken
from updraft.store.limit_reads import raw_holders

NOW = pendulum.datetime(2024, 1, 1, tz="UTC")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every DynamoDB operation the store sends."""
    recorded: list[str] = []
    original = BaseClient._make_api_call

    def record(self, operation, params):
        if self.meta.service_model.service_name == "dynamodb":
            recorded.append(operation)
        return original(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", record)
    return recorded


def _marked(store, limit_id: str, holder: str) -> bool:
    """Whether the holder's marker item marks it for the limit (read raw: a mark is an attribute per limit)."""
    item = store.models.limit._get_connection().get_item(
        keys.holder_marker_pk(keys.holder_key(holder)), keys.HOLDER_MARKER_SK, consistent_read=True)
    return keys.marker_attribute(limit_id) in item.get("Item", {})


def _wide_pool(store, name: str = "wide", size: int = 400, filled: int = 5) -> str:
    """A pool of ``size`` slots spread over its shards by ``filled`` takes (the fifth finds the root full)."""
    limit_id = pool_limit(name)
    store.set_pool(name, size)
    for n in range(filled):
        assert store.take_slots(limit_id, f"first-{n}", 1, limit=size, now=NOW)
    assert store._shape(limit_id).active > 1
    return limit_id


def test_a_take_of_a_sharded_limit_reads_nothing(store, config, s3, calls):
    limit_id = _wide_pool(store)
    calls.clear()
    assert store.take_slots(limit_id, "h", 1, limit=400, now=NOW) is Taken.YES
    assert calls == ["UpdateItem", "UpdateItem"]  # the mark, the home shard
    calls.clear()
    assert store.release_slots(limit_id, "h")
    assert calls == ["UpdateItem", "UpdateItem"]  # the entry, then its mark
    fresh = DynamoStore(config, s3_client=s3)  # another invocation, which never saw this limit
    calls.clear()
    assert fresh.take_slots(limit_id, "g", 1, limit=400, now=NOW) is Taken.YES
    assert calls == ["UpdateItem"] * 3  # the root refuses, saying its shape; the mark; the shard
    assert fresh.get_limit(limit_id).holders["g"] == 1


def _names_in(store, limit_id: str, index: int) -> list[str]:
    return [e.name for e in limit_shards.entries(raw_holders(store._read(limit_id)[index]))]


def test_a_holder_placed_away_from_its_home_is_refused_without_a_read(store, calls):
    """Its home was full when it took, then gained room: only the marker knows it holds elsewhere."""
    limit_id = _wide_pool(store, size=12, filled=12)  # caps 4, 4, 4: every shard full
    active = store._shape(limit_id).active
    holder = next(h for h in (f"holder-{n}" for n in range(200)) if keys.holder_shard(h, active) == 0)
    assert store.release_slots(limit_id, _names_in(store, limit_id, 1)[0])  # one slot free, in shard 1
    assert store.take_slots(limit_id, holder, 1, limit=12, now=NOW)  # its home (the root) full: placed in 1
    assert holder in _names_in(store, limit_id, 1)
    assert store.release_slots(limit_id, _names_in(store, limit_id, 0)[0])  # now its home has room
    calls.clear()
    assert store.take_slots(limit_id, holder, 1, limit=12, now=NOW) is Taken.HELD
    assert calls == ["UpdateItem"]  # the mark's refusal alone
    assert store.get_limit(limit_id).holders[holder] == 1


def test_a_limit_that_grows_from_its_root_marks_the_root_holders(store, calls):
    limit_id = pool_limit("growing")
    store.set_pool("growing", 40)
    for n in range(4):  # the root alone (4 slots): no markers
        assert store.take_slots(limit_id, f"early-{n}", 1, limit=40, now=NOW)
    assert store._shape(limit_id).extent == 1
    assert store.take_slots(limit_id, "late", 1, limit=40, now=NOW)  # the root full: the limit grows
    assert store._shape(limit_id).extent > 1
    calls.clear()
    assert store.take_slots(limit_id, "early-2", 1, limit=40, now=NOW) is Taken.HELD
    assert calls == ["UpdateItem"]
    assert store.get_limit(limit_id).holders["early-2"] == 1


def test_a_crashed_takes_marker_blocks_only_until_it_is_stale(store, monkeypatch):
    limit_id = _wide_pool(store)
    key = keys.holder_key("crashed")
    assert store._mark(limit_id, key, "token-of-a-take-that-died")  # then its invocation stopped
    assert store.take_slots(limit_id, "crashed", 1, limit=400, now=NOW) is Taken.HELD  # maybe still under way
    monkeypatch.setattr(limit_markers, "MARKER_STALE", pendulum.duration(seconds=-1))
    assert store.take_slots(limit_id, "crashed", 1, limit=400, now=NOW) is Taken.YES  # holds nowhere: taken over
    assert store.take_slots(limit_id, "crashed", 1, limit=400, now=NOW) is Taken.HELD  # it holds now
    assert store.get_limit(limit_id).holders["crashed"] == 1


def test_a_refused_take_leaves_no_marker_and_a_release_removes_it(store):
    limit_id = _wide_pool(store, size=8, filled=8)
    assert store.take_slots(limit_id, "late", 1, limit=8, now=NOW) is Taken.FULL
    assert not _marked(store, limit_id, "late")
    assert store.release_slots(limit_id, "first-3")
    assert store.take_slots(limit_id, "late", 1, limit=8, now=NOW) is Taken.YES
    assert _marked(store, limit_id, "late")
    assert store.release_slots(limit_id, "late")
    assert not _marked(store, limit_id, "late")
    assert store.take_slots(limit_id, "late", 1, limit=8, now=NOW) is Taken.YES  # the same holder again


def test_a_take_near_full_goes_where_room_was_seen_instead_of_reading_again(store, calls):
    limit_id = _wide_pool(store, size=40, filled=39)  # 10 shards, one slot left somewhere
    active = store._shape(limit_id).active
    free = next(i for i, shard in enumerate(store._read(limit_id)) if int(shard.available) > 0)
    store._see_rooms(limit_id, store._read(limit_id))
    # A holder whose home and the two shards after it are full: probing would refuse three times, then read.
    holder = next(h for h in (f"late-{n}" for n in range(500))
                  if free not in [(keys.holder_shard(h, active) + step) % active for step in range(3)])
    calls.clear()
    assert store.take_slots(limit_id, holder, 1, limit=40, now=NOW) is Taken.YES
    assert calls == ["UpdateItem", "UpdateItem"]  # its mark, then the shard seen with room
    calls.clear()
    assert store.take_slots(limit_id, "one-too-many", 1, limit=40, now=NOW) is Taken.FULL
    assert "UpdateItem" not in calls[1:-1]  # seen full: no shard is probed, the limit is read to be sure


def test_a_release_goes_straight_to_the_shard_its_take_named(store, config, s3, calls):
    """A holder placed away from its home (its home full): told where, a release is one write and the marker's
    delete, from any process; not told, it probes its home and onward, then reads."""
    limit_id = _wide_pool(store, size=12, filled=12)
    active = store._shape(limit_id).active
    holder = next(h for h in (f"holder-{n}" for n in range(200)) if keys.holder_shard(h, active) == 0)
    assert store.release_slots(limit_id, _names_in(store, limit_id, 2)[0])  # room only in shard 2
    placed: dict[str, int] = {}
    assert store.take_slots(limit_id, holder, 1, limit=12, now=NOW, placed=placed) is Taken.YES
    assert placed == {limit_id: 2}
    fresh = DynamoStore(config, s3_client=s3)  # the worker that ends the try
    calls.clear()
    assert fresh.release_slots(limit_id, holder, shard=placed[limit_id])
    assert calls == ["UpdateItem", "UpdateItem"]
    assert holder not in store.get_limit(limit_id).holders


def test_a_release_by_a_process_that_saw_the_root_alone_removes_the_marker_the_growth_wrote(store, config, s3):
    """Taken while the limit was its root alone (no marker); another process's take grows the limit and marks
    the root's holders; the release, by the process that still remembers the root alone, must remove that marker
    too, or every later take of the holder is refused as held until the marker is stale."""
    limit_id = pool_limit("grows_meanwhile")
    store.set_pool("grows_meanwhile", 40)
    assert store.take_slots(limit_id, "early", 1, limit=40, now=NOW)
    other = DynamoStore(config, s3_client=s3)
    for n in range(4):  # the root full: the fourth of these grows the limit and marks "early"
        assert other.take_slots(limit_id, f"other-{n}", 1, limit=40, now=NOW)
    assert other._shape(limit_id).extent > 1 and store._shape(limit_id).extent == 1
    assert store.release_slots(limit_id, "early")
    assert not _marked(store, limit_id, "early")
    assert other.take_slots(limit_id, "early", 1, limit=40, now=NOW) is Taken.YES


def test_a_release_between_the_growths_read_and_its_marking_leaves_no_marker(store):
    """The growth read the root with "gone" in it; "gone" was released before its marker was written (that
    release saw the limit grown and had no marker to delete): the marking must not leave it blocked."""
    limit_id = pool_limit("released_meanwhile")
    store.set_pool("released_meanwhile", 40)
    for name in ("gone", "stays"):
        assert store.take_slots(limit_id, name, 1, limit=40, now=NOW)
    root_as_read = store._get(keys.limit_pk(limit_id), keys.LIMIT_SK)
    assert store.release_slots(limit_id, "gone")
    store._mark_root_holders(root_as_read, limit_id)
    assert (_marked(store, limit_id, "gone"), _marked(store, limit_id, "stays")) == (False, True)


def test_a_final_release_is_one_write_and_its_marker_refuses_the_holder_after(store, calls):
    """The last release of a try that ended for good leaves its marker to expire: one write instead of two, and
    a claim that still names the ended try (a stale read of its instance) is refused at the marker."""
    limit_id = _wide_pool(store)
    placed: dict[str, int] = {}
    assert store.take_slots(limit_id, "ended", 1, limit=400, now=NOW, placed=placed) is Taken.YES
    calls.clear()
    assert store.release_slots(limit_id, "ended", shard=placed[limit_id], final=True)
    assert calls == ["UpdateItem"]  # the entry alone
    assert "ended" not in store.get_limit(limit_id).holders
    assert _marked(store, limit_id, "ended")  # left to its TTL
    calls.clear()
    assert store.take_slots(limit_id, "ended", 1, limit=400, now=NOW) is Taken.HELD
    assert calls == ["UpdateItem"]
    assert "ended" not in store.get_limit(limit_id).holders
