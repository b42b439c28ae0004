"""BranchDayOfWeekOperator: follow one list of tasks on the given days of the week, another on the others."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from updraft.operators.branch import BaseBranchOperator
from updraft.sdk import timezone
from updraft.sdk.weekday import WeekDay


class BranchDayOfWeekOperator(BaseBranchOperator):
    """``week_day`` is a day name, a ``WeekDay`` or a set of either, validated at parse time.

    With ``use_task_logical_date`` the run's logical date (else its ``run_after``) decides; otherwise today in
    the DAG's timezone does, as in Airflow.
    """

    def __init__(
        self,
        *,
        follow_task_ids_if_true: str | Iterable[str],
        follow_task_ids_if_false: str | Iterable[str],
        week_day: str | Iterable[str] | WeekDay | Iterable[WeekDay],
        use_task_logical_date: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.follow_task_ids_if_true = follow_task_ids_if_true
        self.follow_task_ids_if_false = follow_task_ids_if_false
        self.week_day = week_day
        self.use_task_logical_date = use_task_logical_date
        self._week_day_num = WeekDay.validate_week_day(week_day)

    def choose_branch(self, context: Any) -> str | Iterable[str]:
        if self.use_task_logical_date:
            now = context.get("logical_date") or context["dag_run"].run_after
        else:
            now = timezone.make_naive(timezone.utcnow(), self.dag.timezone)
        if now.isoweekday() in self._week_day_num:
            return self.follow_task_ids_if_true
        return self.follow_task_ids_if_false
