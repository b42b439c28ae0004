"""Airflow's ``TaskInstanceKey`` (``airflow.sdk.types``): the key an operator link's ``get_link`` receives."""

from __future__ import annotations

from typing import NamedTuple


class TaskInstanceKey(NamedTuple):
    """One try of one task instance, in Airflow's field order."""

    dag_id: str
    task_id: str
    run_id: str
    try_number: int = 1
    map_index: int = -1

    @property
    def primary(self) -> tuple[str, str, str, int]:
        return self.dag_id, self.task_id, self.run_id, self.map_index
