"""The XCom aggregate: one item per (task instance, key) in its run's partition, the value inline or in S3."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from updraft.model.records import TIKey
from updraft.serialization import canonical_json
from updraft.store import keys
from updraft.store.base import StoreBase
from updraft.store.models import XComItem


class XComStore(StoreBase):
    def put_xcom(self, key: TIKey, xcom_key: str, value: Any, *, now: dt.datetime) -> None:
        X = self.models.xcom
        raw = canonical_json({"v": value})
        data, s3_key = self.blobs.pack(raw, f"xcoms/{key.dag_id}/{key.run_id}/{key.task_id}/{key.map_index}/"
                                            f"{xcom_key}.json.gz")
        X(keys.run_pk(key.dag_id, key.run_id), keys.xcom_sk(key.task_id, key.map_index, xcom_key),
          dag_id=key.dag_id, run_id=key.run_id, task_id=key.task_id, map_index=key.map_index, key=xcom_key,
          data=data, s3_key=s3_key, created_at=now).save()

    def get_xcom(self, key: TIKey, xcom_key: str, default: Any = None) -> Any:
        X = self.models.xcom
        try:
            item = X.get(keys.run_pk(key.dag_id, key.run_id), keys.xcom_sk(key.task_id, key.map_index, xcom_key),
                         consistent_read=True)
        except X.DoesNotExist:
            return default
        return self.blobs.unpack(item.data, item.s3_key)["v"]

    def _xcom_items(self, dag_id: str, run_id: str, task_id: str, map_index: int | None) -> Iterator[XComItem]:
        X = self.models.xcom
        prefix = keys.xcom_task_prefix(task_id, map_index)
        return X.query(keys.run_pk(dag_id, run_id), X.sk.startswith(prefix), consistent_read=True)

    def list_xcoms(self, dag_id: str, run_id: str, task_id: str,
                   map_index: int | None = None) -> dict[tuple[int, str], Any]:
        return {(int(i.map_index), i.key): self.blobs.unpack(i.data, i.s3_key)["v"]
                for i in self._xcom_items(dag_id, run_id, task_id, map_index)}

    def clear_xcoms(self, key: TIKey) -> int:
        count = 0
        for item in self._xcom_items(key.dag_id, key.run_id, key.task_id, key.map_index):
            item.delete()
            count += 1
        return count
