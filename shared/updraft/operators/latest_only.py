"""LatestOnlyOperator: downstream work runs only in the run for the most recent schedule interval.

Airflow 3.3's code, step for step: a manual run follows every direct downstream task; otherwise the DAG's
timetable gives the interval before this run's and the one after it, and the downstream tasks run only when
"now" falls between the end of the previous interval and the end of the next one. A timetable with no next run
(``@once``) lets them run; the DAG's ``end_date`` is not consulted (Airflow asks without it).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any, ClassVar

import pendulum

from updraft.operators.branch import BaseBranchOperator


class LatestOnlyOperator(BaseBranchOperator):
    """Skip the direct downstream tasks unless this run is the latest scheduled interval."""

    ui_color: ClassVar[str] = "#e9ffdb"

    def choose_branch(self, context: Any) -> str | Iterable[str]:
        # lazy: the task child only (timetables when the branch is chosen)
        from updraft.timetables.base import DagRunType

        dag_run = context["dag_run"]
        if dag_run.run_type == DagRunType.MANUAL:
            self.log.info("Manually triggered DAG_Run: allowing execution to proceed.")
            return list(self.get_direct_relative_ids(upstream=False))

        dates = self._get_compare_dates(dag_run)
        if dates is None:
            self.log.info("Last scheduled execution: allowing execution to proceed.")
            return list(self.get_direct_relative_ids(upstream=False))

        now = pendulum.now("UTC")
        left_window, right_window = dates
        self.log.info("Checking latest only with left_window: %s right_window: %s now: %s",
                      left_window, right_window, now)
        if not left_window < now <= right_window:
            self.log.info("Not latest execution, skipping downstream.")
            return []
        self.log.info("Latest, allowing execution to proceed.")
        return list(self.get_direct_relative_ids(upstream=False))

    def _get_compare_dates(self, dag_run: Any) -> tuple[pendulum.DateTime, pendulum.DateTime] | None:
        # lazy: the task child only (timetables when the branch is chosen)
        from updraft.timetables.base import DataInterval, TimeRestriction

        dagrun_date = dag_run.logical_date or dag_run.run_after
        start = pendulum.instance(dag_run.data_interval_start) if dag_run.data_interval_start else dagrun_date
        end = pendulum.instance(dag_run.data_interval_end) if dag_run.data_interval_end else dagrun_date

        timetable = self.dag.timetable
        current_interval = DataInterval(start=start, end=end)
        restriction = TimeRestriction(earliest=None, latest=current_interval.end - timedelta(microseconds=1),
                                      catchup=True)
        prev_info = timetable.next_dagrun_info(last_automated_data_interval=current_interval,
                                               restriction=restriction)
        left = prev_info.data_interval.end if prev_info else current_interval.start

        restriction = TimeRestriction(earliest=current_interval.end, latest=None, catchup=True)
        next_info = timetable.next_dagrun_info(last_automated_data_interval=current_interval,
                                               restriction=restriction)
        if not next_info:
            return None
        return (left, next_info.data_interval.end)
