"""BaseBranchOperator and BranchMixIn: Airflow's base for operators that choose which downstream tasks run.

A subclass implements ``choose_branch(context)`` and returns task ids and/or task-group ids to follow; every other
direct downstream task is skipped (``None`` or an empty list skips them all). The skips are decided by
``ti.skip_all_except`` exactly as for ``BranchPythonOperator``, and ``_can_skip_downstream`` tells the serializer
this task may skip its downstream tasks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from updraft.sdk.baseoperator import BaseOperator


class BranchMixIn:
    """``do_branch``: log the choice and skip every direct downstream task not followed (Airflow's name)."""

    _can_skip_downstream: ClassVar[bool] = True
    log: Any

    def do_branch(self, context: Any, branches_to_execute: str | Iterable[str] | None) -> Any:
        self.log.info("Branch into %s", branches_to_execute)
        followed = branches_to_execute
        if followed is not None and not isinstance(followed, str):
            followed = list(followed)
        context["ti"].skip_all_except(followed)
        return branches_to_execute


class BaseBranchOperator(BaseOperator, BranchMixIn):
    """Implement ``choose_branch(context)``; ``execute`` follows what it returns and pushes it as the XCom."""

    _can_skip_downstream: ClassVar[bool] = True
    inherits_from_skipmixin: ClassVar[bool] = True

    def choose_branch(self, context: Any) -> str | Iterable[str] | None:
        raise NotImplementedError

    def execute(self, context: Any) -> Any:
        return self.do_branch(context, self.choose_branch(context))
