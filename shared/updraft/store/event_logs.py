"""The event log aggregate: one item per change made through the API, Airflow's ``log`` table.

An entry's id is Airflow's integer ``event_log_id`` and also its key: the millisecond it was requested times
10^6, plus the request id's CRC-32 modulo 10^6 (:func:`event_log_id`). So ids sort in time order (the sort key
is the zero-padded id: a time range is a key range), ``GET /eventLogs/{id}`` is one ``GetItem``, and a request
delivered twice (the same API Gateway request id and time) writes the same key: the second put's
``attribute_not_exists`` condition fails and nothing is recorded twice. Entries spread over ``index_shards``
partitions by id, so a burst of changes has no hot partition; a listing queries every shard.
"""

from __future__ import annotations

import datetime as dt
import zlib
from dataclasses import dataclass

from pynamodb.expressions.condition import Condition

from updraft.store import keys
from updraft.store.base import StoreBase
from updraft.store.models import EventLogItem
from updraft.store.writes import conditional, item_absent

_PER_MS = 10**6  # ids per millisecond: the request id's hash picks one


@dataclass(frozen=True)
class EventLog:
    """One entry, as Airflow's ``Log`` row has it (``extra`` is JSON text with sensitive values masked)."""

    event_log_id: int
    when: dt.datetime
    event: str
    owner: str | None = None
    dag_id: str | None = None
    task_id: str | None = None
    run_id: str | None = None
    map_index: int | None = None
    try_number: int | None = None
    logical_date: dt.datetime | None = None
    extra: str | None = None


def event_log_id(when: dt.datetime, request_id: str) -> int:
    """The id (and key) of the entry for the request ``request_id`` made at ``when``: the same for a retry."""
    millis = int(when.timestamp() * 1000)
    return millis * _PER_MS + zlib.crc32(request_id.encode()) % _PER_MS


def _first_id(when: dt.datetime) -> int:
    return int(when.timestamp() * 1000) * _PER_MS


def _record(item: EventLogItem) -> EventLog:
    return EventLog(event_log_id=int(item.event_log_id), when=item.when, event=item.event, owner=item.owner,
                    dag_id=item.dag_id, task_id=item.task_id, run_id=item.run_id,
                    map_index=None if item.map_index is None else int(item.map_index),
                    try_number=None if item.try_number is None else int(item.try_number),
                    logical_date=item.logical_date, extra=item.extra)


class EventLogStore(StoreBase):
    def put_event_log(self, entry: EventLog) -> bool:
        """Record ``entry`` once: False when its id is already recorded (the same request delivered again)."""
        E = self.models.event_log
        item = E(keys.event_log_pk(entry.event_log_id, self.config.index_shards), keys.event_sk(entry.event_log_id),
                 event_log_id=entry.event_log_id, when=entry.when, event=entry.event, owner=entry.owner,
                 dag_id=entry.dag_id, task_id=entry.task_id, run_id=entry.run_id, map_index=entry.map_index,
                 try_number=entry.try_number, logical_date=entry.logical_date, extra=entry.extra)
        return conditional(lambda: item.save(condition=item_absent(E)))

    def get_event_log(self, event_log_id: int) -> EventLog | None:
        E = self.models.event_log
        if not 0 <= event_log_id < 10**keys.EVENT_ID_DIGITS:
            return None
        try:
            return _record(E.get(keys.event_log_pk(event_log_id, self.config.index_shards), keys.event_sk(event_log_id),
                                 consistent_read=True))
        except E.DoesNotExist:
            return None

    def list_event_logs(self, *, after: dt.datetime | None = None, before: dt.datetime | None = None
                        ) -> list[EventLog]:
        """Every entry with ``after < when < before`` (either bound optional), in id order: a key-range query
        per shard (the bounds' milliseconds), strongly consistent, then the exact bounds."""
        E = self.models.event_log
        low = keys.event_sk(_first_id(after) if after is not None else 0)
        high = keys.event_sk(_first_id(before + dt.timedelta(milliseconds=1)) - 1 if before is not None
                              else 10**keys.EVENT_ID_DIGITS - 1)
        condition: Condition = E.sk.between(low, high)
        found: list[EventLog] = []
        for shard in self._shards():
            found += [_record(item)
                      for item in E.query(keys.event_logs_shard_pk(shard), condition, consistent_read=True)]
        return sorted((entry for entry in found if (after is None or entry.when > after)
                       and (before is None or entry.when < before)), key=lambda entry: entry.event_log_id)
