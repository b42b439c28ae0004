"""Airflow's ``XCom`` class (``airflow.sdk.execution_time.xcom``) for code running inside a try: provider operator
links (``XCom.get_value(ti_key=..., key=...)``) and operators read and write XComs through it.

Every call goes through the running try's task instance (``get_current_context()["ti"]``), so it reaches the
environment's XComs the way ``ti.xcom_pull``/``ti.xcom_push`` do (in a task's process, through the worker's store
proxy), never a database. Outside a try it fails as ``get_current_context`` does. A try writes only its own XComs.
"""

from __future__ import annotations

from typing import Any

from updraft.sdk.context import get_current_context
from updraft.sdk.exceptions import UnsupportedFeatureError
from updraft.sdk.xcom_arg import XCOM_RETURN_KEY

__all__ = ["XCOM_RETURN_KEY", "XCom"]


def _ti() -> Any:
    return get_current_context()["ti"]


class XCom:
    """Class methods reading and writing XComs of the current DAG (Airflow's ``BaseXCom`` interface)."""

    XCOM_RETURN_KEY = XCOM_RETURN_KEY

    @classmethod
    def get_value(cls, *, ti_key: Any, key: str | None = None) -> Any:
        """The XCom ``key`` (default: the return value) that the try ``ti_key`` pushed."""
        return cls.get_one(key=key or XCOM_RETURN_KEY, dag_id=ti_key.dag_id, task_id=ti_key.task_id,
                           run_id=ti_key.run_id, map_index=ti_key.map_index)

    @classmethod
    def get_one(cls, *, key: str = XCOM_RETURN_KEY, dag_id: str, task_id: str, run_id: str,
                map_index: int | None = None, include_prior_dates: bool = False) -> Any:
        """One XCom of ``task_id`` in ``run_id`` (None when it was not pushed)."""
        ti = _ti()
        return ti.xcom_pull(task_ids=task_id, dag_id=dag_id, key=key, include_prior_dates=include_prior_dates,
                            map_indexes=-1 if map_index is None else map_index, run_id=run_id)

    @classmethod
    def set(cls, key: str, value: Any, *, dag_id: str, task_id: str, run_id: str, map_index: int = -1) -> None:
        """Push ``value`` as XCom ``key`` of the running try (the only XComs a try may write)."""
        ti = _ti()
        if (dag_id, task_id, run_id, map_index) != (ti.dag_id, ti.task_id, ti.run_id, ti.map_index):
            raise UnsupportedFeatureError("XCom.set for another task instance",
                                          "a try writes only its own XComs (ti.xcom_push)")
        ti.xcom_push(key, value)

    @classmethod
    def delete(cls, *args: Any, **kwargs: Any) -> None:
        raise UnsupportedFeatureError("XCom.delete", "XComs are cleared by Updraft when a task instance is cleared")
