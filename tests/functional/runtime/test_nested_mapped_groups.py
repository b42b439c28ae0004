"""A mapped task group inside a mapped task group, run as Airflow 3.3.2 runs it (checked side by side): its tasks
have the product of the groups' lengths as map indexes, each group's argument taken at the map index modulo that
group's length, and a task after the groups gets every instance's value in map-index order."""

from __future__ import annotations

from tests.functional.deferrals.defer_harness import DeferralEnv

BODY = """
from airflow.sdk import task_group

@dag(schedule=None, start_date=START)
def nested_values():
    @task
    def pair(x, y):
        return f"{x}{y}"

    @task
    def collect(vs):
        return list(vs)

    @task_group
    def outer(x):
        @task_group
        def inner(y):
            return pair(x, y)

        return inner.expand(y=["a", "b", "c"])

    collect(outer.expand(x=[1, 2]))

nested_values()
"""


def test_nested_mapped_groups_map_the_product_with_airflows_values(tmp_path):
    from moto import mock_aws

    with mock_aws():
        env = DeferralEnv(tmp_path, parallelism=8)
        env.in_process = True  # tries in this process, not each in a child
        env.add("nested_values", BODY)
        run = env.run("nested_values")
        states = env.states("nested_values", run.run_id)
        assert states == {"collect": "success", **{f"outer.inner.pair[{i}]": "success" for i in range(6)}}
        # Airflow 3.3.2: x = [1, 2][i % 2], y = ["a", "b", "c"][i % 3]
        assert env.xcom("nested_values", run.run_id, "collect") == ["1a", "2b", "1c", "2a", "1b", "2c"]
