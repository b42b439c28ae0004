"""Mapped task groups for `updraft dags test`: per-index trigger rules inside the group, everything downstream of
it, expand over an upstream's XCom, and expand_kwargs with partial. Tasks check the values they receive, so a
wrong index or a wrong XCom fails the run."""

import datetime as dt

from airflow.sdk import DAG, task, task_group

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


@task
def check(value):
    if value == 2:  # index 1 fails
        raise ValueError("two is not allowed")
    return value * 2


@task
def after(value, x):
    assert value == x * 2, (value, x)  # the same index's check result, and the same index's argument
    return value


@task(trigger_rule="all_done")
def tidy(x):
    return x


@task
def summary(values):
    return sorted(values)


@task(trigger_rule="all_done")
def report(values):
    assert sorted(values) == [2, 6], list(values)  # what the succeeded indexes returned


with DAG("group_of_three", schedule=None, start_date=START):
    @task_group
    def each(x):
        checked = check(x)
        done = after(checked, x)
        done >> tidy(x)
        return done

    results = each.expand(x=[1, 2, 3])
    summary(results)
    report(results)


@task
def numbers():
    return [10, 20]


@task
def total(values, expected):
    assert sorted(values) == expected, list(values)


with DAG("group_over_xcom", schedule=None, start_date=START):
    @task_group
    def double(n):
        return check.override(task_id="twice")(n)  # 10 and 20: doubled

    total(double.expand(n=numbers()), [20, 40])


@task
def add(a, b, c):
    return a + b + c


with DAG("group_expand_kwargs", schedule=None, start_date=START):
    @task_group
    def adding(a, b, c):
        return add(a, b, c)

    total(adding.partial(c=100).expand_kwargs([{"a": 1, "b": 2}, {"a": 3, "b": 4}]), [103, 107])
