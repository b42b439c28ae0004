"""The standard provider's branch operators, sensors and @task.run_if / @task.skip_if, written as a user would.

Run by ``test_dags_test_standard_provider.py`` with logical date 2024-03-05 (a Tuesday, 00:00 UTC).
"""

from __future__ import annotations

import datetime

import pendulum

from airflow.providers.common.compat.sdk import TriggerRule
from airflow.providers.standard.operators.datetime import BranchDateTimeOperator
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.latest_only import LatestOnlyOperator
from airflow.providers.standard.operators.weekday import BranchDayOfWeekOperator
from airflow.providers.standard.sensors.bash import BashSensor
from airflow.providers.standard.sensors.filesystem import FileSensor
from airflow.providers.standard.sensors.time import TimeSensor
from airflow.providers.standard.sensors.weekday import DayOfWeekSensor
from airflow.providers.standard.utils.weekday import WeekDay
from airflow.sdk import DAG, task

START = pendulum.datetime(2024, 1, 1, tz="UTC")


def _pair(prefix: str, branch) -> None:
    branch >> [EmptyOperator(task_id=f"{prefix}_true"), EmptyOperator(task_id=f"{prefix}_false")]


with DAG("branches", schedule="@daily", start_date=START, catchup=False):
    # The logical date 2024-03-05 00:00 is inside [03-04, 03-06].
    _pair("in_window", BranchDateTimeOperator(
        task_id="in_window", use_task_logical_date=True,
        target_lower=datetime.datetime(2024, 3, 4), target_upper=datetime.datetime(2024, 3, 6),
        follow_task_ids_if_true="in_window_true", follow_task_ids_if_false="in_window_false"))
    # Times of day are put on the logical date's day; upper before lower moves upper to the next day, so
    # 23:00 -> 01:00 is 03-05 23:00 .. 03-06 01:00 and 03-05 00:00 is outside it (Airflow's arithmetic).
    _pair("night", BranchDateTimeOperator(
        task_id="night", use_task_logical_date=True,
        target_lower=datetime.time(23, 0), target_upper=datetime.time(1, 0),
        follow_task_ids_if_true="night_true", follow_task_ids_if_false="night_false"))
    # Only a lower bound: anything after it is in range.
    _pair("after", BranchDateTimeOperator(
        task_id="after", use_task_logical_date=True, target_lower=datetime.datetime(2024, 3, 1),
        target_upper=None, follow_task_ids_if_true=["after_true"], follow_task_ids_if_false=["after_false"]))
    _pair("tuesday", BranchDayOfWeekOperator(
        task_id="tuesday", use_task_logical_date=True, week_day="tuesday",
        follow_task_ids_if_true="tuesday_true", follow_task_ids_if_false="tuesday_false"))
    _pair("weekend", BranchDayOfWeekOperator(
        task_id="weekend", use_task_logical_date=True, week_day={WeekDay.SATURDAY, "Sunday"},
        follow_task_ids_if_true="weekend_true", follow_task_ids_if_false="weekend_false"))
    # `dags test` makes a manual run: LatestOnlyOperator lets everything downstream run.
    latest = LatestOnlyOperator(task_id="latest")
    latest >> EmptyOperator(task_id="after_latest") >> EmptyOperator(task_id="after_latest_2")


with DAG("sensors", schedule=None, start_date=START):
    BashSensor(task_id="bash_ok", bash_command="test {{ ds }} = 2024-03-05")
    # Any non-zero code pokes again; the timeout with soft_fail skips.
    BashSensor(task_id="bash_soft", bash_command="exit 1", timeout=1, poke_interval=0.2, soft_fail=True)
    # Only retry_exit_code pokes again: another code fails the task at once (AirflowFailException).
    BashSensor(task_id="bash_fail", bash_command="exit 3", retry_exit_code=99, retries=2)
    BashSensor(task_id="bash_env", bash_command='test "$WHO" = "{{ dag.dag_id }}"', env={"WHO": "{{ dag.dag_id }}"})
    # filepath is templated and joined to the connection's "path" extra (AIRFLOW_CONN_FS_TEST, set by the test).
    FileSensor(task_id="file_found", fs_conn_id="fs_test", filepath="{{ ds_nodash }}/*.csv", poke_interval=0.2,
               timeout=5)
    FileSensor(task_id="dir_with_file", fs_conn_id="fs_test", filepath="nested", poke_interval=0.2, timeout=5)
    FileSensor(task_id="file_missing", fs_conn_id="fs_test", filepath="absent.csv", poke_interval=0.2, timeout=1,
               soft_fail=True)
    FileSensor(task_id="no_connection", fs_conn_id="fs_nowhere", filepath="x", poke_interval=0.2, timeout=1)
    DayOfWeekSensor(task_id="on_tuesday", week_day=WeekDay.TUESDAY, use_task_logical_date=True)
    DayOfWeekSensor(task_id="on_friday", week_day="Friday", use_task_logical_date=True, timeout=1,
                    poke_interval=0.2, soft_fail=True)


with DAG("conditions", schedule=None, start_date=START):

    @task.run_if(lambda context: context["logical_date"].day == 5)
    @task
    def run_when_true():
        return 1

    @task.run_if(lambda context: False)
    @task
    def run_when_false():
        return 1

    @task.skip_if(lambda context: (True, "skipped by its own message"))
    @task
    def skip_when_true():
        return 1

    @task.skip_if(lambda context: context["params"].get("skip", False))
    @task
    def skip_when_false():
        return 1

    @task.skip_if(lambda context: False)
    @task.run_if(lambda context: context["ti"].task_id == "both")
    @task
    def both():
        return 1

    @task(trigger_rule=TriggerRule.ALL_SUCCESS)
    def after_skipped(value):
        return value

    run_when_true()
    after_skipped.override(task_id="after_run_when_false")(run_when_false())
    skip_when_true()
    skip_when_false()
    both()


# TimeSensor (example_sensors.py): today's time in the DAG's timezone; midnight has passed, the day's last
# microsecond has not (the soft_fail timeout skips it).
with DAG("time_sensors", schedule=None, start_date=START):
    TimeSensor(task_id="passed", target_time=datetime.time(0, 0))
    TimeSensor(task_id="passed_deferred", target_time=datetime.time(0, 0), deferrable=True)
    TimeSensor(task_id="not_yet_soft", target_time=datetime.time(23, 59, 59, 999999), timeout=1, poke_interval=0.2,
               soft_fail=True)
