"""The XCom aggregate: one item per (task instance, key) in its instance's shard of its run's partition, the value
inline or in S3."""

from __future__ import annotations

import datetime as dt
from typing import Any

from updraft.model.records import TIKey
from updraft.serialization import canonical_json
from updraft.store import keys
from updraft.store.base import StoreBase
from updraft.store.blobs import Oversized
from updraft.store.models import XComItem
from updraft.store.writes import conditional, item_present


class XComStore(StoreBase):
    def put_xcom(self, key: TIKey, xcom_key: str, value: Any, *, now: dt.datetime, shown: Any = None) -> None:
        """``shown``: the value as the API and UI show it, with secrets masked (None: the value itself); stored
        beside the value only where it differs, so readers of the value never see the mask."""
        X = self.models.xcom
        path = keys.blob_path("xcoms", key.dag_id, key.run_id, key.task_id, key.map_index, xcom_key)
        raw = canonical_json({"v": value})
        data, s3_key = self.blobs.pack(raw, f"{path}.json.gz")
        shown_raw = raw if shown is None else canonical_json({"v": shown})
        shown_data, shown_s3_key = (None, None) if shown_raw == raw else self.blobs.pack(shown_raw,
                                                                                        f"{path}.shown.json.gz")
        X(self.ti_pk(*key), keys.xcom_sk(key.task_id, key.map_index, xcom_key),
          dag_id=key.dag_id, run_id=key.run_id, task_id=key.task_id, map_index=key.map_index, key=xcom_key,
          data=data, s3_key=s3_key, shown_data=shown_data, shown_s3_key=shown_s3_key, created_at=now).save()

    def get_xcom(self, key: TIKey, xcom_key: str, default: Any = None) -> Any:
        X = self.models.xcom
        try:
            item = X.get(self.ti_pk(*key), keys.xcom_sk(key.task_id, key.map_index, xcom_key), consistent_read=True)
        except X.DoesNotExist:
            return default
        return self.blobs.unpack(item.data, item.s3_key)["v"]

    def _xcom_items(self, dag_id: str, run_id: str, task_id: str, map_index: int | None) -> list[XComItem]:
        """One instance's XComs (in its shard), or every map index's of the task (``map_index`` None: in every
        shard, as a mapped task's instances spread)."""
        return self.query_run(self.models.xcom, dag_id, run_id, keys.xcom_task_prefix(task_id, map_index),
                              shard_of=None if map_index is None else (task_id, map_index))

    def list_xcoms(self, dag_id: str, run_id: str, task_id: str,
                   map_index: int | None = None) -> dict[tuple[int, str], Any]:
        return {(int(i.map_index), i.key): self.blobs.unpack(i.data, i.s3_key)["v"]
                for i in self._xcom_items(dag_id, run_id, task_id, map_index)}

    def shown_xcoms(self, dag_id: str, run_id: str, task_id: str, map_index: int | None = None, *,
                    max_json_bytes: int | None = None) -> dict[tuple[int, str], Any]:
        """:meth:`list_xcoms` as the API shows them: secrets masked. With ``max_json_bytes``, a value whose JSON
        is longer is ``blobs.Oversized`` (where its shown form is stored), unread; 0 reads no value."""
        out = {}
        for i in self._xcom_items(dag_id, run_id, task_id, map_index):
            shown = i.shown_data is not None or i.shown_s3_key is not None
            unpacked = (self.blobs.unpack(i.shown_data, i.shown_s3_key, max_json_bytes) if shown
                        else self.blobs.unpack(i.data, i.s3_key, max_json_bytes))
            out[(int(i.map_index), i.key)] = unpacked if isinstance(unpacked, Oversized) else unpacked["v"]
        return out

    def delete_xcom(self, key: TIKey, xcom_key: str) -> bool:
        X = self.models.xcom
        item = X(self.ti_pk(*key), keys.xcom_sk(key.task_id, key.map_index, xcom_key))
        return conditional(lambda: item.delete(condition=item_present(X)))

    def clear_xcoms(self, key: TIKey) -> int:
        count = 0
        for item in self._xcom_items(key.dag_id, key.run_id, key.task_id, key.map_index):
            item.delete()
            count += 1
        return count
