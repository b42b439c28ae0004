"""BranchDateTimeOperator: follow one list of tasks when "now" (or the logical date) is within a window.

Airflow's semantics: the bounds may be datetimes or times of day (combined with the date compared), a window whose
upper time is before its lower one spans midnight, and naive bounds are read in the DAG's timezone.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Any

from updraft.operators.branch import BaseBranchOperator
from updraft.sdk import timezone
from updraft.sdk.exceptions import AirflowException


class BranchDateTimeOperator(BaseBranchOperator):
    """``follow_task_ids_if_true`` when ``target_lower <= now <= target_upper``, else ``follow_task_ids_if_false``."""

    def __init__(
        self,
        *,
        follow_task_ids_if_true: str | Iterable[str],
        follow_task_ids_if_false: str | Iterable[str],
        target_lower: datetime.datetime | datetime.time | None,
        target_upper: datetime.datetime | datetime.time | None,
        use_task_logical_date: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if target_lower is None and target_upper is None:
            raise AirflowException(
                "Both target_upper and target_lower are None. At least one "
                "must be defined to be compared to the current datetime"
            )
        self.target_lower = target_lower
        self.target_upper = target_upper
        self.follow_task_ids_if_true = follow_task_ids_if_true
        self.follow_task_ids_if_false = follow_task_ids_if_false
        self.use_task_logical_date = use_task_logical_date

    def choose_branch(self, context: Any) -> str | Iterable[str]:
        if self.use_task_logical_date:
            now = context.get("logical_date") or context["dag_run"].run_after
        else:
            now = timezone.coerce_datetime(timezone.utcnow())
        lower, upper = target_times_as_dates(now, self.target_lower, self.target_upper)
        lower = timezone.coerce_datetime(lower, self.dag.timezone)
        upper = timezone.coerce_datetime(upper, self.dag.timezone)
        if upper is not None and upper < now:
            return self.follow_task_ids_if_false
        if lower is not None and lower > now:
            return self.follow_task_ids_if_false
        return self.follow_task_ids_if_true


def target_times_as_dates(
    base_date: datetime.datetime,
    lower: datetime.datetime | datetime.time | None,
    upper: datetime.datetime | datetime.time | None,
) -> tuple[datetime.datetime | None, datetime.datetime | None]:
    """Times of day become datetimes on ``base_date``'s day; an upper time before the lower one is the next day."""
    if isinstance(lower, datetime.datetime) and isinstance(upper, datetime.datetime):
        return lower, upper
    if isinstance(lower, datetime.time):
        lower = datetime.datetime.combine(base_date, lower)
    if isinstance(upper, datetime.time):
        upper = datetime.datetime.combine(base_date, upper)
    if lower is None or upper is None:
        return lower, upper
    if upper < lower:
        upper += datetime.timedelta(days=1)
    return lower, upper
