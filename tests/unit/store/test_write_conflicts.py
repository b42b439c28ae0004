"""A single write rejected because a transaction held its item (``TransactionConflictException``, which botocore
does not retry) is sent again: to its caller it is the same write a moment later; a failed condition is still a
lost race, and other errors and a conflict that outlasts the retries are raised."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError
from pynamodb.exceptions import UpdateError

from updraft.store import writes


def _error(code: str) -> UpdateError:
    return UpdateError("Failed to update item", ClientError({"Error": {"Code": code, "Message": code}}, "UpdateItem"))


class Flaky:
    """A write rejected ``conflicts`` times by a transaction, then answering ``then`` (None: it lands)."""

    def __init__(self, conflicts: int, then: str | None = None) -> None:
        self.conflicts, self.then, self.calls = conflicts, then, 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.conflicts:
            raise _error("TransactionConflictException")
        if self.then is not None:
            raise _error(self.then)
        return "written"


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    pauses: list[float] = []
    monkeypatch.setattr(writes.time, "sleep", pauses.append)
    return pauses


def test_a_write_a_transaction_held_back_lands_when_sent_again(no_pauses: list[float]) -> None:
    write = Flaky(3)
    assert writes.conditional(write) is True
    assert write.calls == 4
    assert len(no_pauses) == 3 and all(0 <= p <= 0.02 for p in no_pauses)


def test_a_failed_condition_after_a_conflict_is_still_a_lost_race() -> None:
    write = Flaky(2, then="ConditionalCheckFailedException")
    assert writes.conditional(write) is False
    assert write.calls == 3


def test_a_conflict_that_outlasts_the_retries_is_raised() -> None:
    write = Flaky(writes.CONFLICT_RETRIES + 1)
    with pytest.raises(UpdateError) as raised:
        writes.conditional(write)
    assert raised.value.cause_response_code == "TransactionConflictException"
    assert write.calls == writes.CONFLICT_RETRIES + 1


def test_other_errors_are_not_retried() -> None:
    write = Flaky(0, then="ValidationException")
    with pytest.raises(UpdateError):
        writes.conditional(write)
    assert write.calls == 1


def test_an_acknowledged_write_is_retried_past_conflicts_too() -> None:
    write = Flaky(1)
    assert writes.acknowledged(write, landed=lambda: False) is True
    assert write.calls == 2


def test_a_raw_client_error_conflict_is_retried() -> None:
    calls = []

    def dispatch() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise ClientError({"Error": {"Code": "TransactionConflictException"}}, "PutItem")
        return "ok"

    assert writes.past_conflicts(dispatch) == "ok" and len(calls) == 2
