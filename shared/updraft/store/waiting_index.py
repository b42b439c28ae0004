"""The ``waiting_tis`` index's declaration (:mod:`updraft.store.waiting` keeps and reads it), apart from
``models`` so that module stays within its size."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pynamodb.attributes import UnicodeAttribute
from pynamodb.indexes import GlobalSecondaryIndex, KeysOnlyProjection

from updraft.store.tables import WAITING_INDEX

if TYPE_CHECKING:
    from updraft.store.models import TaskInstanceItem  # noqa: F401 (the index's item type, named as a string)


class WaitingIndex(GlobalSecondaryIndex["TaskInstanceItem"]):  # type: ignore[no-untyped-call]
    """A run's waiting instances in claim order: keys only, so a waiting instance's other writes (its reason
    changing) never write to it."""

    class Meta:
        index_name = WAITING_INDEX
        projection = KeysOnlyProjection()

    waiting_pk = UnicodeAttribute(hash_key=True)
    waiting_sk = UnicodeAttribute(range_key=True)
