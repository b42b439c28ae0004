"""EmptyOperator: a node that does nothing; the scheduler completes it without starting a worker."""

from __future__ import annotations

from typing import Any, ClassVar

from updraft.sdk.baseoperator import BaseOperator


class EmptyOperator(BaseOperator):
    ui_color: ClassVar[str] = "#e8f7e4"
    inherits_from_empty_operator: ClassVar[bool] = True

    def execute(self, context: Any) -> None:
        pass
