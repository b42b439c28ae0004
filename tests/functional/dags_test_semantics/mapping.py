"""Dynamic task mapping: literals, upstream XComs, cross products, expand_kwargs, reduction, empty expansions."""

import datetime

from airflow.exceptions import AirflowFailException, AirflowSkipException
from airflow.sdk import DAG, task

with DAG("mapping", schedule=None, start_date=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)):

    @task
    def double(x):
        return 2 * x

    @task
    def numbers():
        return [1, 2, 3]

    @task
    def check(values, expected):
        if list(values) != expected:
            raise AirflowFailException(f"got {list(values)}, expected {expected}")

    lit = double.override(task_id="lit").expand(x=[5, 6])
    check.override(task_id="check_lit")(lit, [10, 12])

    over_xcom = double.override(task_id="over_xcom").expand(x=numbers())
    check.override(task_id="check_over_xcom")(over_xcom, [2, 4, 6])
    # mapping over a mapped task's results expands over the gathered list
    again = double.override(task_id="again").expand(x=over_xcom)
    check.override(task_id="check_again")(again, [4, 8, 12])

    @task
    def pair(x, y):
        return f"{x}{y}"

    cross = pair.expand(x=[1, 2], y=["a", "b"])
    check.override(task_id="check_cross")(cross, ["1a", "1b", "2a", "2b"])

    @task
    def kwargs_list():
        return [{"x": 1, "y": "p"}, {"x": 2, "y": "q"}]

    by_kwargs = pair.override(task_id="by_kwargs").expand_kwargs(kwargs_list())
    check.override(task_id="check_by_kwargs")(by_kwargs, ["1p", "2q"])

    # One failing map index; in another mapped task one skipping index. (Not both in one task: all_success
    # downstream would be upstream_failed or skipped depending on which index finishes first, in Airflow too.)
    @task
    def picky(x):
        if x == 2:
            raise AirflowFailException("two")
        return x

    picked = picky.expand(x=[1, 2])
    picked >> double.override(task_id="after_picky_all_done", trigger_rule="all_done")(1)
    picked >> double.override(task_id="after_picky_all_success")(1)

    @task
    def skippy(x):
        if x == 3:
            raise AirflowSkipException("three")
        return x

    skipped_one = skippy.expand(x=[1, 3])
    skipped_one >> double.override(task_id="after_skippy_all_success")(1)
    skipped_one >> double.override(task_id="after_skippy_none_failed", trigger_rule="none_failed")(1)

    # Empty expansions: the mapped task is skipped with no try; its downstream follows its trigger rule.
    @task
    def nothing():
        return []

    empty_lit = double.override(task_id="empty_lit").expand(x=[])
    empty_xcom = double.override(task_id="empty_xcom").expand(x=nothing())
    for rule in ("all_success", "all_done", "none_failed", "none_failed_min_one_success", "one_success",
                 "all_skipped"):
        empty_lit >> double.override(task_id=f"after_empty_{rule}", trigger_rule=rule)(1)
    empty_xcom >> double.override(task_id="after_empty_xcom")(1)

    # Reducing what did run: the lazy sequence holds the XComs that exist (Airflow 3 PlainXComArg.resolve gives a
    # LazyXComSequence for a mapped upstream), so none for an empty expansion and none for a skipped index.
    check.override(task_id="reduce_empty", trigger_rule="all_done")(empty_lit, [])
    check.override(task_id="reduce_skippy", trigger_rule="none_failed")(skipped_one, [1])

    # Mapped over the XCom of a task that failed / skipped: the unexpanded instance is upstream_failed / skipped.
    @task
    def broken():
        raise AirflowFailException("no list")

    @task
    def skipped_source():
        raise AirflowSkipException("no list")

    double.override(task_id="over_failed").expand(x=broken())
    double.override(task_id="over_skipped").expand(x=skipped_source())
