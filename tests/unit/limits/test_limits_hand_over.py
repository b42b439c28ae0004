"""hand_over on moto (a transaction atomic): an ended holder's slots move to the next holder with no counter
written, all or nothing; a repeat, a lost race and a lost acknowledgement are read as such; eight schedulers
claiming, releasing and handing over at once never hold more than the pool."""

from __future__ import annotations

import random

import pytest
from limits_helpers import LostAcknowledgement, S, check_accounts, claim, end, race, scan, scheduled

from updraft.limits import (
    Acquired,
    Handed,
    Lost,
    Need,
    NotHeld,
    Table,
    Ticket,
    acquire,
    fits,
    hand_over,
    over_share,
    release,
    resize,
    shard_ids,
)
from updraft.store import keys

POOL = "pool:p"
NEEDS = (Need(POOL, 1, 10), Need("parallelism", 1, 130))


def counter_items(table: Table) -> list[dict]:
    return [item for item in scan(table) if item["sk"]["S"] == keys.COUNTER_SK]


def read_counters(table: Table, ticket: Ticket) -> dict[tuple[str, int], dict]:
    return {shard: table.client.get_item(TableName=table.name, Key=keys.counter_key(*shard),
                                         ConsistentRead=True)["Item"] for shard in shard_ids(ticket)}


def test_a_hand_over_moves_the_holds_to_the_next_holder_and_writes_no_counter(store, table):
    ended, following = scheduled(store, "ended"), scheduled(store, "next")
    (ticket,) = acquire(table, [claim(store, ended, *NEEDS)]).tickets
    before = counter_items(table)
    result = hand_over(table, end(store, ended), ticket, claim(store, following, *NEEDS))
    assert isinstance(result, Handed)
    assert result.ticket.holds == ticket.holds and result.ticket.ticket_id != ticket.ticket_id
    assert counter_items(table) == before  # not one counter written
    assert store.get_ti(ended).state == S.SUCCESS and store.get_ti(ended).ticket is None
    assert store.get_ti(following).state == S.QUEUED and store.get_ti(following).ticket == result.ticket.encode()
    assert check_accounts(table) == {keys.limit_pk(POOL): 1, keys.limit_pk("parallelism"): 1}
    # the same ticket again (a repeated end) is refused whole: the next holder keeps what it was handed
    third = scheduled(store, "third")
    assert hand_over(table, end(store, ended), ticket, claim(store, third, *NEEDS)) == NotHeld()
    assert store.get_ti(third).state == S.SCHEDULED
    assert release(table, end(store, following), result.ticket)
    assert check_accounts(table) == {keys.limit_pk(POOL): 0, keys.limit_pk("parallelism"): 0}


def test_a_next_holder_claimed_meanwhile_is_lost_and_the_ended_one_keeps_its_ticket(store, table):
    ended, following = scheduled(store, "ended"), scheduled(store, "next")
    (ticket,) = acquire(table, [claim(store, ended, *NEEDS)]).tickets
    (taken,) = acquire(table, [claim(store, following, *NEEDS)]).tickets  # another scheduler's claim
    assert hand_over(table, end(store, ended), ticket, claim(store, following, *NEEDS)) == Lost((0,))
    assert store.get_ti(ended).ticket == ticket.encode() and store.get_ti(following).ticket == taken.encode()
    assert check_accounts(table) == {keys.limit_pk(POOL): 2, keys.limit_pk("parallelism"): 2}


def test_a_resent_hand_over_is_recognised_as_its_own(store, table):
    ended, following = scheduled(store, "ended"), scheduled(store, "next")
    (ticket,) = acquire(table, [claim(store, ended, *NEEDS)]).tickets
    lossy = Table(LostAcknowledgement(table.client), table.name)
    result = hand_over(lossy, end(store, ended), ticket, claim(store, following, *NEEDS))
    assert isinstance(result, Handed) and store.get_ti(following).ticket == result.ticket.encode()
    assert check_accounts(table) == {keys.limit_pk(POOL): 1, keys.limit_pk("parallelism"): 1}


def test_only_a_claim_needing_exactly_what_the_ticket_holds_is_handed(store, table):
    ended = scheduled(store, "ended")
    (ticket,) = acquire(table, [claim(store, ended, *NEEDS)]).tickets
    following = scheduled(store, "next")
    assert fits(claim(store, following, *reversed(NEEDS)), ticket)  # (the order of the needs aside)
    for needs in ((Need(POOL, 2, 10), NEEDS[1]), NEEDS[:1], (*NEEDS, Need("run", 1, 4))):
        assert not fits(claim(store, following, *needs), ticket)
        with pytest.raises(ValueError, match="the ticket holds"):
            hand_over(table, end(store, ended), ticket, claim(store, following, *needs))
    assert not fits(claim(store, following, NEEDS[1], held=Ticket.new()), Ticket.new(ticket.holds[:1]))
    assert store.get_ti(following).state == S.SCHEDULED and store.get_ti(ended).ticket == ticket.encode()


def test_a_shard_over_its_share_is_not_handed_over(store, table):
    holders = [scheduled(store, f"t{i}") for i in range(3)]
    tickets = acquire(table, [claim(store, key, Need(POOL, 1, 10)) for key in holders]).tickets
    assert not over_share(tickets[0], read_counters(table, tickets[0]))
    assert resize(table, POOL, 2)  # shrunk below the 3 held: the shard is one over
    assert over_share(tickets[0], read_counters(table, tickets[0]))
    assert over_share(tickets[0], {})  # (not read: not known to be under)


@pytest.mark.slow
def test_eight_schedulers_handing_over_never_hold_more_than_the_pool(store, table):
    """Claims, releases and hand-overs of one pool of 10 from eight threads at once, through serialized moto:
    every ticket's slots are in the counters and never more than 10 are held, at every scan."""
    instances = [scheduled(store, f"t{i}") for i in range(96)]
    outcomes: list[object] = []

    def scheduler(seed: int) -> None:
        rng = random.Random(seed)
        mine: list[tuple[object, Ticket]] = []
        for _ in range(12):
            if mine and rng.random() < 0.5:  # hand one over to an instance another scheduler may want too
                key, ticket = mine.pop(rng.randrange(len(mine)))
                following = rng.choice([i for i in instances if i != key])  # one transaction names an item once
                result = hand_over(table, end(store, key), ticket, claim(store, following, *NEEDS))
                outcomes.append(result)
                if isinstance(result, Handed):
                    mine.append((following, result.ticket))
                else:
                    assert isinstance(result, Lost) and release(table, end(store, key), ticket)
                continue
            batch = rng.sample(instances, rng.randint(1, 2))
            result = acquire(table, [claim(store, key, *NEEDS) for key in batch])
            if isinstance(result, Acquired):
                mine.extend(zip(batch, result.tickets, strict=True))
            if mine and rng.random() < 0.3:
                key, ticket = mine.pop(rng.randrange(len(mine)))
                assert release(table, end(store, key), ticket)

    peaks = race(table, 8, scheduler, POOL)
    assert len(peaks) > 5 and max(peaks) <= 10
    held = check_accounts(table)[keys.limit_pk(POOL)]
    assert held == sum(store.get_ti(key).state == S.QUEUED for key in instances) <= 10
    assert {type(outcome) for outcome in outcomes} == {Handed, Lost}
