"""Airflow 3.2's ``BaseAsyncOperator`` (an operator whose ``aexecute`` coroutine runs in the worker's event loop):
importable, because provider modules re-export it, but not supported: creating one fails the DAG file's parse with
an error naming it, so a task never runs with a different meaning."""

from __future__ import annotations

from typing import Any

from updraft.sdk.baseoperator import BaseOperator
from updraft.sdk.exceptions import UnsupportedFeatureError


class BaseAsyncOperator(BaseOperator):
    """Refused at construction (module doc)."""

    @property
    def is_async(self) -> bool:
        return True

    def __init__(self, **kwargs: Any) -> None:
        raise UnsupportedFeatureError(f"{type(self).__name__} (BaseAsyncOperator)",
                                      "async operators are not implemented in Updraft yet; use a synchronous "
                                      "operator or a deferrable one (self.defer with a trigger)")
