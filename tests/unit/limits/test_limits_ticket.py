"""The ticket: one string on the holder's item, canonical, so a release's condition is a string equality."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from updraft.limits import Hold, Ticket

holds = st.dictionaries(st.text(min_size=1), st.tuples(st.integers(0, 31), st.integers(1, 2**31)), max_size=6).map(
    lambda found: [Hold(limit_id, shard, slots) for limit_id, (shard, slots) in found.items()])


@given(holds, st.text(min_size=1))
def test_a_ticket_decodes_to_itself_and_encodes_to_the_same_string(found, ticket_id):
    ticket = Ticket.new(reversed(found), ticket_id)
    text = ticket.encode()
    assert Ticket.decode(text) == ticket
    assert Ticket.decode(text).encode() == text
    assert ticket.limit_ids == tuple(sorted(hold.limit_id for hold in found))
    assert all(ticket.slots(hold.limit_id) == hold.slots for hold in found)


@given(holds, st.sets(st.text(min_size=1)))
def test_keeping_part_of_a_ticket_keeps_its_id_and_those_holds_only(found, kept):
    ticket = Ticket.new(found)
    part = ticket.keeping(kept)
    if not kept & set(ticket.limit_ids):
        assert part is None
        return
    assert part is not None and part.ticket_id == ticket.ticket_id
    assert part.limit_ids == tuple(sorted(kept & set(ticket.limit_ids)))
    assert part.encode() != ticket.encode() or part == ticket


def test_adding_holds_keeps_the_id_and_the_order():
    ticket = Ticket.new([Hold("pool:p", 0, 2)])
    more = ticket.adding([Hold("a", 1, 1)])
    assert more.ticket_id == ticket.ticket_id and more.limit_ids == ("a", "pool:p")
    with pytest.raises(ValueError, match="once"):
        more.adding([Hold("a", 0, 1)])
    assert Ticket.new().ticket_id != Ticket.new().ticket_id and Ticket.new().slots("a") == 0


@pytest.mark.parametrize("text", [
    "", "{}", "[]", '["id"]', '["id",[["a",0]]]', '[1,[]]', '["id",[["a",0,0]]]', '["id",[["a",-1,1]]]',
    '["id",[["a","0",1]]]', '["id",[["a",0,1.0]]]', '["id",[["b",0,1],["a",0,1]]]', '["id",[["a",0,1],["a",1,1]]]',
    '["id", []]', '["id",[[1,0,1]]]', '["id",[["a",true,1]]]',
])
def test_anything_else_is_not_a_ticket(text):
    with pytest.raises(ValueError, match="ticket"):
        Ticket.decode(text)
